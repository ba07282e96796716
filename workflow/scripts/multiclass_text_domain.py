from unishift.data.text import split_summary, write_split
from unishift.data.text_multiclass import CLASS_NAMES_3, load_tweet_domain_3class
from unishift.io import write_json
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
domain, options = snakemake.wildcards.domain, snakemake.params.options
splits = load_tweet_domain_3class(
    domain,
    seed=snakemake.params.seed,
    validation_fraction=options["validation_fraction"],
    test_fraction=options["test_fraction"],
)
summary = {
    "domain": domain,
    "text_source": "tweets",
    "classes": list(CLASS_NAMES_3),
    "splits": split_summary(splits),
}
for name, frame in splits.items():
    counts = frame["label"].value_counts().sort_index().to_dict()
    log.info("%s/%s: %d rows, items per class %s", domain, name, len(frame), counts)
    write_split(frame, snakemake.output[name])
write_json(snakemake.output.summary, summary)
