from unishift.data.hub_access import use_offline_hub

# before anything imports the Hugging Face libraries: hub files come from the download stage only
use_offline_hub(snakemake.params.cache)

import json  # noqa: E402

from unishift.data.text import load_domain, split_summary, write_split  # noqa: E402
from unishift.io import write_json  # noqa: E402
from unishift.workflow.jobs import start_job  # noqa: E402

log = start_job(snakemake)
domain, source = snakemake.wildcards.domain, snakemake.params.text_source
hub = snakemake.input.get("hub")
commit = json.loads(open(hub).read())["commit"] if hub else None
splits = load_domain(
    domain,
    source,
    seed=snakemake.params.seed,
    data_root=snakemake.params.data_root,
    options=snakemake.params.options,
    commit=commit,
)
summary = {"domain": domain, "text_source": source, "splits": split_summary(splits)}
if commit:
    summary["hub_commit"] = commit
for name, frame in splits.items():
    counts = frame["label"].value_counts().sort_index().to_dict()
    log.info("%s/%s: %d rows, items per class %s", domain, name, len(frame), counts)
    write_split(frame, snakemake.output[name])
first = splits["train"]["label"].iloc[:5000]
summary["train_first_5000_prevalence"] = float(first.mean())
write_json(snakemake.output.summary, summary)
