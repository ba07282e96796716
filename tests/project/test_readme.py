"""The README's two set-up-and-go commands stay true: CI runs exactly the README's test command."""

import re

from tests.conftest import REPO


def readme_commands():
    text = (REPO / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    test_command = [c for c in readme_commands() if "pytest" in c]
    assert len(test_command) == 1 and test_command[0].strip() in ci


def test_readme_main_command_runs_the_embedded_default():
    main = [c for c in readme_commands() if "snakemake --cores" in c]
    assert main and "--configfile" not in main[0] and "pip install" in main[0]
