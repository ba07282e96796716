# %% [markdown]
# # Your own quantifier next to the paper's, on the same samples
#
# A notebook in script form (`# %%` cells: open it with Jupyter through jupytext, or run it with
# `python examples/notebook_api.py results`). It needs a finished run of the workflow, e.g. the
# README's first command or `snakemake --cores 2 --configfile .test/config.yaml`.

# %%
import sys
from pathlib import Path

import pandas as pd
from quapy.method.aggregative import ACC

from unishift import adapt, cd_diagram, evaluate, from_quapy, load_records, load_setups, table

results = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
out = Path(sys.argv[2] if len(sys.argv) > 2 else results / "notebook")
out.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# The label-shift setups the run persisted: one per (classifier, data set), each with its validation
# set, its test pool and the sample indices every method was scored on.

# %%
setups = load_setups(results, shift="label")
print([setup.key for setup in setups])

# %% [markdown]
# Any QuaPy aggregative quantifier becomes a unishift quantifier (it works from the classifier's
# posteriors; its own classifier is unused) named after its QuaPy class, and through the paper's
# adaptations a calibrator (ρ2ζ) and an accuracy predictor (ρ2α).

# %%
acc = from_quapy(ACC())
mine = {
    "quantification": evaluate(acc, setups),
    "calibration": evaluate(adapt(acc, "q2c"), setups, name="ACC_q2c_5B"),
    "cap": evaluate(adapt(acc, "q2a"), setups, name="ACC_q2a"),
}

# %% [markdown]
# A registered method scored here gives the workflow's own numbers, sample for sample.

# %%
pacc = evaluate("PACC", setups, task="quantification")
workflow_pacc = load_records(results, "label", "quantification", ["PACC"])
columns = ["classifier", "dataset", "sample_id", "true_value", "estimate", "error", "status"]
pd.testing.assert_frame_equal(pacc[columns], workflow_pacc[columns], check_dtype=False)
print("PACC through the API equals the workflow's per-sample records")

# %% [markdown]
# The paper's table and critical-difference diagram, with our methods as extra columns. The records
# read are those of the methods in the run's config (results/provenance.json). The table needs the
# group of a method the registry does not know: "adapted" measures ours against the paper's
# reference methods and leaves the paper's win rates as they are.

# %%
for task, records in mine.items():
    combined = pd.concat([load_records(results, "label", task), records], ignore_index=True)
    groups = {name: "adapted" for name in records["method"].unique()}
    result = table(combined, task, "label", groups=groups)
    frame = pd.DataFrame(result.means, columns=result.names)
    frame.insert(0, "setup", [f"{c}/{d}" for c, d in result.setups])
    frame.to_csv(out / f"{task}_label.csv", index=False)
    cd_diagram(result, out / f"{task}_label_cd.tex")
    print(task, "mean error per method:")
    print(frame.drop(columns="setup").mean().sort_values().round(4).to_string())
