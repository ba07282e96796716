from tests.conftest import REPO
from unishift.workflow.catalogue import catalogue_markdown


def test_config_readme_lists_every_registered_method_as_registered():
    text = (REPO / "config" / "README.md").read_text()
    assert catalogue_markdown() in text, "regenerate with: python -m unishift.workflow.catalogue"
