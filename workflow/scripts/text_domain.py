from unishift.data.text import load_domain, split_summary, write_split
from unishift.io import write_json
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
domain, source = snakemake.wildcards.domain, snakemake.params.text_source
splits = load_domain(
    domain,
    source,
    seed=snakemake.params.seed,
    data_root=snakemake.params.data_root,
    options=snakemake.params.options,
)
summary = {"domain": domain, "text_source": source, "splits": split_summary(splits)}
for name, frame in splits.items():
    log.info(
        "%s/%s: %d rows, positive prevalence %.4f", domain, name, len(frame), frame["label"].mean()
    )
    write_split(frame, snakemake.output[name])
first = splits["train"]["label"].iloc[:5000]
summary["train_first_5000_prevalence"] = float(first.mean())
log.info("positive prevalence of the first %d stored training rows: %.4f", len(first), first.mean())
write_json(snakemake.output.summary, summary)
