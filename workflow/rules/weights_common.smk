# Helpers of weights.smk: domain-classifier weights computed once per (setup, plan), read by every
# evaluation job whose method needs them (docs/domain-weights.md). A method's plan comes from the
# method itself (its class, or its adaptation's inner method), so a plugin's method gets it too.
from unishift.workflow.domain_weight_artifacts import method_domain_weight_plan
from unishift.methods.domain_weights import SHARED_PLANS


wildcard_constraints:
    plan="|".join(SHARED_PLANS),


def domain_weight_plan_of(shift, task, method):
    return method_domain_weight_plan(task, method, shift, method_params(task, method))


def domain_weight_inputs(wildcards):
    """The evaluation job's weights files, one per setup it evaluates: none unless its method
    shares domain weights. Each file names its setup (the job matches them by setup key).
    """
    plan = domain_weight_plan_of(wildcards.shift, wildcards.task, wildcards.method)
    if plan not in SHARED_PLANS:
        return {}
    files = []
    for setup in setup_fields(wildcards):
        if wildcards.shift == "label":
            folder = f"label/{setup['dataset']}/{setup['classifier']}"
        else:
            folder = f"{wildcards.shift}/{setup['model']}/{setup['source']}__{setup['target']}"
        files.append(results_file("weights", folder=folder, plan=plan))
    return {"domain_weights": files}
