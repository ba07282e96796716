# Helpers of weights.smk: domain-classifier weights computed once per (setup, plan), read by every
# evaluation job whose method needs them (docs/domain-weights.md). A method's plan comes from the
# method itself (its class, or its adaptation's inner method), so a plugin's method gets it too.
from unishift.domain_weight_artifacts import method_domain_weight_plan
from unishift.methods.domain_weights import SHARED_PLANS


wildcard_constraints:
    plan="|".join(SHARED_PLANS),


def domain_weight_plan_of(shift, task, method):
    return method_domain_weight_plan(task, method, shift, method_params(task, method))


def domain_weight_files(shift, plan):
    """The weights files of every setup of a shift, in evaluation_setups() order."""
    if shift == "label":
        return [
            f"{RESULTS}/weights/label/{d}/{c}/{plan}.npz"
            for d, c in evaluation_setups("label")
        ]
    return [
        f"{RESULTS}/weights/covariate/{m}/{s}__{t}/{plan}.npz"
        for m, s, t in evaluation_setups("covariate")
    ]


def domain_weight_inputs(wildcards):
    """The evaluation job's weights files: none unless its method shares domain weights."""
    plan = domain_weight_plan_of(wildcards.shift, wildcards.task, wildcards.method)
    if plan not in SHARED_PLANS:
        return {}
    return {"domain_weights": domain_weight_files(wildcards.shift, plan)}
