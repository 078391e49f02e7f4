"""The reproduction report: every paper's headline claims tested on QUIC.

``python -m vegas_qlog.reproduce run`` (what ``scripts/reproduce`` calls)
runs the simulator for every experiment of :mod:`.plan`, measures each run
(:mod:`.measures`), tests every claim of :mod:`.claims` by the rule of
:mod:`.verdict`, and writes the Markdown report and its figures
(:mod:`.document`). ``python -m vegas_qlog.reproduce check DOC`` checks a
written report (:mod:`.check`).
"""

from __future__ import annotations

from .check import check_report
from .claims import Check, Claim, all_claims
from .plan import Experiment, RunSpec, build_plan
from .results import Ref, Results
from .verdict import VERDICTS, Outcome

__all__ = [
    "VERDICTS",
    "Check",
    "Claim",
    "Experiment",
    "Outcome",
    "Ref",
    "Results",
    "RunSpec",
    "all_claims",
    "build_plan",
    "check_report",
]
