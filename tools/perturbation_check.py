"""How far last-bit changes of the Logistic Regression move printed label-shift cells.

Each draw multiplies every fitted coefficient and intercept by (1 + eps * z), z standard normal
from a seeded generator (eps = 1e-14 is a few units in the last place), predicts the posteriors
again and recomputes the cells as the workflow does (``unishift.report.paper_cells``). A cell whose value
crosses a 3-decimal boundary under such draws depends on the last bits of the classifier, which
differ between machines, BLAS builds and CPUs (docs/reproduction.md, "The printed cells that
differ")::

    .venv/bin/python tools/perturbation_check.py --data-root ../shared/data \\
        --datasets semeion,ctg.1,ctg.2,ctg.3,spambase \\
        --cells quantification/EMQ_LasCal,quantification/LasCal_c2q,cap/LasCal_c2a
"""

from __future__ import annotations

import argparse
import tempfile


def perturbed_posteriors(model, splits, samples, eps: float, seed: int) -> dict:
    import numpy as np

    from unishift.data.label_shift import predict_posteriors

    rng = np.random.default_rng(seed)
    coef, intercept = model.coef_.copy(), model.intercept_.copy()
    try:
        model.coef_ = coef * (1 + eps * rng.standard_normal(coef.shape))
        model.intercept_ = intercept * (1 + eps * rng.standard_normal(intercept.shape))
        return predict_posteriors(model, splits, samples)
    finally:
        model.coef_, model.intercept_ = coef, intercept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", required=True, help="comma-separated QuaPy names")
    parser.add_argument("--cells", required=True, help="comma-separated task/method")
    parser.add_argument("--data-root", default=None, help="offline data copies")
    parser.add_argument("--eps", default="1e-14,1e-12", help="comma-separated relative sizes")
    parser.add_argument("--draws", type=int, default=8, help="draws per size (seeds 1..draws)")
    args = parser.parse_args()

    import numpy as np

    from unishift.data.label_shift import load_label_setup, train_and_predict
    from unishift.evaluation.evaluate import evaluate_method
    from unishift.report.paper_cells import paper_value, samples, splits

    data_home = tempfile.mkdtemp(prefix="quapy_home")
    cells = [tuple(cell.split("/")) for cell in args.cells.split(",")]
    sizes = [float(eps) for eps in args.eps.split(",")]
    for dataset in args.datasets.split(","):
        arrays = splits(dataset, data_home, args.data_root)
        drawn = samples(dataset, data_home, args.data_root)
        model, unperturbed = train_and_predict(arrays, "LR", 0, samples=drawn)
        draws = [(None, None, unperturbed)] + [
            (eps, seed, perturbed_posteriors(model, arrays, drawn, eps, seed))
            for eps in sizes
            for seed in range(1, args.draws + 1)
        ]
        values = {cell: [] for cell in cells}
        for _, _, posteriors in draws:
            setup = load_label_setup(arrays, posteriors, drawn, dataset, "LR", 0)
            for task, method in cells:
                records, _ = evaluate_method(task, method, "label", [setup])
                values[(task, method)].append(float(np.mean(records["error"])))
        for task, method in cells:
            printed = f"{paper_value(task, method, dataset, 'LR'):.3f}"
            ours, *moved = values[(task, method)]
            equal = sum(f"{v:.3f}" == printed for v in moved)
            print(f"{dataset}/LR {task}/{method}: unperturbed {ours:.5f}, printed {printed}; "
                  f"{len(moved)} draws (eps {args.eps}) range {min(moved):.5f}-{max(moved):.5f}, "
                  f"equal to the printed value in {equal}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
