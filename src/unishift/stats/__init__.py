"""Statistics behind the result tables and CD diagrams (docs/reporting.md §2-§3)."""

from unishift.stats.cd import (
    CDResult,
    cd_analysis,
    groups_from_graph,
    holm,
    maximal_cliques,
    pairwise_wilcoxon,
)
from unishift.stats.ranks import (
    RANK_DECIMALS,
    FriedmanResult,
    average_ranks,
    failure_penalised,
    friedman_iman_davenport,
    rank_matrix,
    top_ranked,
)
from unishift.stats.significance import (
    ALPHA,
    RowBold,
    WinRates,
    binomial_greater_pvalue,
    bold_row,
    cell_means,
    not_significant,
    row_colours,
    wilcoxon_pvalue,
    win_rates,
)

__all__ = [
    "ALPHA",
    "RANK_DECIMALS",
    "CDResult",
    "FriedmanResult",
    "RowBold",
    "WinRates",
    "average_ranks",
    "binomial_greater_pvalue",
    "bold_row",
    "cd_analysis",
    "cell_means",
    "failure_penalised",
    "friedman_iman_davenport",
    "groups_from_graph",
    "holm",
    "maximal_cliques",
    "not_significant",
    "pairwise_wilcoxon",
    "rank_matrix",
    "row_colours",
    "top_ranked",
    "wilcoxon_pvalue",
    "win_rates",
]
