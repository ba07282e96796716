from unishift.data.text import load_tweet_domain, split_summary, tweet_class_names, write_split
from unishift.io import write_json
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
domain, options = snakemake.wildcards.domain, snakemake.params.options
splits = load_tweet_domain(
    domain,
    seed=snakemake.params.seed,
    validation_fraction=options["validation_fraction"],
    test_fraction=options["test_fraction"],
    classes=3,
)
summary = {
    "domain": domain,
    "text_source": "tweets",
    "classes": list(tweet_class_names(3)),
    "splits": split_summary(splits),
}
for name, frame in splits.items():
    counts = frame["label"].value_counts().sort_index().to_dict()
    log.info("%s/%s: %d rows, items per class %s", domain, name, len(frame), counts)
    write_split(frame, snakemake.output[name])
write_json(snakemake.output.summary, summary)
