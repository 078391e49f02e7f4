"""The reproduction's accounts: each decision an account makes from the
numbers it is handed, checked on made-up results where the right wording is
known in advance (the references are the inputs' own order and spread, not
the accounts' helpers)."""

from __future__ import annotations

import math

import pandas as pd

from vegas_qlog.reproduce import accounts as acc
from vegas_qlog.reproduce.results import Results

Values = dict[tuple[str, str, str], list[float]]


def _results(values: Values, points: dict[tuple[str, str, str, float], list[float]] | None = None) -> Results:
    rows = []
    for (experiment, label, metric), xs in values.items():
        for seed, x in enumerate(xs, start=1):
            rows.append({"experiment": experiment, "label": label, "point": math.nan, "seed": seed, metric: x})
    for (experiment, label, metric, point), xs in (points or {}).items():
        for seed, x in enumerate(xs, start=1):
            rows.append({"experiment": experiment, "label": label, "point": point, "seed": seed, metric: x})
    frame = pd.DataFrame(rows).groupby(["experiment", "label", "point", "seed"], dropna=False).first().reset_index()
    return Results(frame)


def _flat(exp: str, metric: str, means: dict[str, float], spread: float = 0.01) -> Values:
    """Three runs per label around each mean (± ``spread`` of it)."""
    return {(exp, lab, metric): [m * (1 - spread), m, m * (1 + spread)] for lab, m in means.items()}


# ---------------------------------------------------------------- 004


def test_t1_vegas_faster_says_whether_vegas_is_faster():
    for vegas, reno, expected in ((120.0, 130.0, "Vegas is not faster."), (135.0, 130.0, "less than the paper's")):
        r = _results(_flat(acc.E1, "large_kBps", {"reno/vegas": vegas, "reno/reno": reno}))
        assert expected in acc._t1_faster(r, "not")


def test_t1_vegas_vegas_order_of_both_transfers():
    base = {**_flat(acc.E1, "small_kBps", {"reno/reno": 80.0}), **_flat(acc.E1, "large_kBps", {"reno/reno": 130.0})}
    faster = {
        **base,
        **_flat(acc.E1, "small_kBps", {"vegas/vegas": 85.0}),
        **_flat(acc.E1, "large_kBps", {"vegas/vegas": 134.0}),
    }
    assert "Both transfers are faster with Vegas" in acc._t1_vegas_vegas(_results(faster), "partly")
    slower_small = {**faster, **_flat(acc.E1, "small_kBps", {"vegas/vegas": 70.0})}
    text = acc._t1_vegas_vegas(_results(slower_small), "not")
    assert "is not faster than Reno/Reno for both transfers" in text
    assert "Both transfers are faster" not in text
    assert acc._t1_vegas_vegas(_results(faster), "reproduced").endswith("As in the paper.")


def test_t2_throughput_ahead_with_both_settings_or_not():
    ahead = _flat(acc.E2, "transfer_kBps", {"reno": 84.0, "vegas-1,3": 86.0, "vegas-2,4": 88.0})
    assert "Both Vegas settings are ahead of Reno" in acc._t2_throughput(_results(ahead), "partly")
    behind = _flat(acc.E2, "transfer_kBps", {"reno": 84.0, "vegas-1,3": 80.0, "vegas-2,4": 88.0})
    assert "Vegas is not ahead of Reno with both settings" in acc._t2_throughput(_results(behind), "not")


def test_t3_background_direction_and_the_transfer_beside_it():
    def run(beside_vegas: float, vegas_transfer: float) -> str:
        values = {
            **_flat(acc.E2, "background_kBps", {"vegas-1,3": beside_vegas, "reno": 72.0}),
            **_flat(acc.E2, "transfer_kBps", {"vegas-1,3": vegas_transfer, "reno": 84.0}),
        }
        return acc._t3_background(_results(values), "partly")

    assert "The direction is the paper's" in run(75.0, 85.0)
    reversed_, slower = run(70.0, 85.0), run(70.0, 60.0)
    assert "does not do better beside Vegas" in reversed_
    assert "direction is the paper's" not in reversed_
    # 85/84 is within 5% of Reno's transfer: the "as much of the link" sentence; 60/84 is not.
    assert "about as much of the link as Reno" in reversed_
    assert "about as much of the link" not in slower


# ---------------------------------------------------------------- 000


def test_f5a_names_vegas_a_only_when_close_and_the_labels_that_spread():
    def run(vegas_a: float, veno_spread: float) -> str:
        values = {
            **_flat(acc.L6, "test_mbps", {"vegas": 1.0, "vegas-a": vegas_a, "vegas-l": 1.5}),
            **_flat(acc.L6, "test_mbps", {"veno": 2.0}, spread=veno_spread),
        }
        return acc._f5a_highest(_results(values), "not")

    close = run(1.55, 0.5)
    assert "Vegas-A, whose steps" in close
    assert "The highest is Veno" in close
    # Three runs at ±50%: the t interval's half-width is far above a fifth of the mean; ±1% is far below.
    assert "Veno varies widely" in close
    far = run(2.5, 0.01)
    assert "Vegas-A, whose steps" not in far
    assert "widely" not in far
    assert "The highest is Vegas-A" in far


def test_f5b_names_the_highest_and_an_unequal_vegas_l():
    values = _flat(acc.L3, "test_mbps", {"vegas": 1.0, "vegas-a": 0.9, "veno": 1.2, "vegas-l": 1.3})
    text = acc._f5b_order(_results(values), "not")
    assert "The highest is Vegas-L, not Veno (×1.08 of Veno's)" in text
    assert "Vegas-L gets ×1.30 of Vegas's" in text
    assert "Vegas-A is not below Vegas" not in text
    values = _flat(acc.L3, "test_mbps", {"vegas": 1.0, "vegas-a": 1.0, "veno": 1.2, "vegas-l": 1.05})
    text = acc._f5b_order(_results(values), "partly")
    assert "Veno is the highest, as in the paper" in text
    assert "not about equal" not in text
    assert "Vegas-A gave exactly Vegas's numbers in every run" in text
    values.update(_flat(acc.L3, "test_mbps", {"vegas-a": 1.1}))
    text = acc._f5b_order(_results(values), "partly")
    assert "Vegas-A is not below Vegas" in text
    assert "exactly" not in text


def test_f6a_fairest_veno_with_and_without_spread():
    def run(veno_spread: float, veno_jain: float) -> str:
        values = {
            **_flat(acc.L6, "jain", {"vegas": 0.76, "vegas-a": 0.92, "vegas-l": 0.90}),
            **_flat(acc.L6, "jain", {"veno": veno_jain}),
            **_flat(acc.L6, "test_mbps", {"veno": 2.0}, spread=veno_spread),
            **_flat(acc.L6, "reno_mbps", {"veno": 2.0}),
        }
        return acc._f6a_fairness(_results(values), "partly")

    assert "Vegas is the least fair, as in the paper" in run(0.01, 0.95)
    assert "Veno is the fairest, as in the paper." in run(0.01, 0.95)
    assert "does not stand clear" in run(0.5, 0.95)
    assert "But the fairest is Vegas-A, not Veno" in run(0.01, 0.80)


def test_f6b_least_fair_vegas_l_taking_more_than_its_share():
    values = {
        **_flat(acc.L3, "jain", {"vegas": 0.97, "vegas-a": 0.96, "veno": 0.95, "vegas-l": 0.93}),
        **_flat(acc.L3, "test_mbps", {"vegas-l": 1.3}),
        **_flat(acc.L3, "reno_mbps", {"vegas-l": 0.7}),
    }
    text = acc._f6b_fairness(_results(values), "partly")
    assert "Vegas is at the top as in the paper, but Vegas-L, its equal in the paper, is at the bottom" in text
    assert "Vegas-L is the least fair because it takes more than its share" in text
    assert "equals Vegas in every run" not in text
    # Vegas-L below its share: no "takes more" claim.
    values.update(_flat(acc.L3, "test_mbps", {"vegas-l": 0.5}))
    assert "takes more than its share" not in acc._f6b_fairness(_results(values), "partly")


# ---------------------------------------------------------------- 001


def test_f5_during_stopped_only_when_every_flow_nearly_stopped():
    stopped = {
        **_flat(acc.REV, "during_mbps", {"venodb": 0.03, "veno": 0.02, "westwood": 0.02, "reno": 0.01}),
        **{(acc.REV, lab, "closed"): [0.0, 0.0, 0.0] for lab in acc.VENO_FAMILY},
    }
    text = acc._f5_during(_results(stopped), "partly")
    assert "Every algorithm nearly stops" in text
    assert "every connection survives" in text
    assert "kept part of its throughput, which ours does not" in text
    kept = {**stopped, **_flat(acc.REV, "during_mbps", {"venodb": 0.8})}
    text = acc._f5_during(_results(kept), "reproduced")
    assert "nearly stops" not in text
    assert "which ours does not" not in text
    closed = {**stopped, (acc.REV, "veno", "closed"): [1.0, 0.0, 0.0]}
    assert "even so Veno 1 of 3 runs closed" in acc._f5_during(_results(closed), "partly")


def test_f5_after_counts_the_runs_that_delivered_nothing():
    values = {
        (acc.REV, "venodb", "after_mbps"): [1.4, 1.3, 1.5],
        (acc.REV, "veno", "after_mbps"): [1.4, 0.0, 0.0],
        (acc.REV, "westwood", "after_mbps"): [1.3, 1.2, 1.1],
        (acc.REV, "reno", "after_mbps"): [0.0, 1.0, 1.1],
        **{(acc.REV, lab, "closed"): [0.0, 0.0, 0.0] for lab in acc.VENO_FAMILY},
    }
    values.update(
        {
            (acc.REV, "venodb", "t_regain_s"): [3.0, 4.0, 5.0],
            (acc.REV, "venodb", "regained"): [1.0, 1.0, 1.0],
            (acc.REV, "veno", "t_regain_s"): [3.0, math.nan, math.nan],
            (acc.REV, "veno", "regained"): [1.0, 0.0, 0.0],
        }
    )
    text = acc._f5_after(_results(values), "partly")
    assert "Some runs delivered nothing in those 50 s (Veno 2 of 3, NewReno 1 of 3 runs)" in text
    # Censored times: the runs that regained the link and how many, never a zero-width number.
    assert "VenoDB 4.0 ± 2.5 s (3 of 3 runs)" in text
    assert "Veno 3.0 s (1 of 3 runs)" in text
    values.update({(acc.REV, lab, "after_mbps"): [1.0, 1.1, 1.2] for lab in acc.VENO_FAMILY})
    assert "delivered nothing" not in acc._f5_after(_results(values), "partly")


def test_f6_fair_shows_the_2_percent_point_not_all_points_pooled():
    points = {}
    for lab in acc.VENO_FAMILY:
        points[(acc.FIVE, lab, "jain", 0.01)] = [0.91, 0.91, 0.91]
        points[(acc.FIVE, lab, "jain", 0.02)] = [0.99, 0.99, 0.99]
        points[(acc.FIVE, lab, "jain", 0.05)] = [0.95, 0.95, 0.95]
    text = acc._f6_fair(_results({}, points), "partly")
    assert text.startswith("Jain's index at 2%: VenoDB 0.990 ± 0.000, Veno 0.990 ± 0.000")
    assert "Every value is near 1" in text
    assert "VenoDB is not measurably fairer" in text
    points[(acc.FIVE, "reno", "jain", 0.05)] = [0.7, 0.7, 0.7]
    assert "Every value is near 1" not in acc._f6_fair(_results({}, points), "partly")


def test_f7_total_fill_and_lead():
    def run(at1: float, venodb_at5: float) -> str:
        points = {}
        for lab in acc.VENO_FAMILY:
            points[(acc.FIVE, lab, "total_mbps", 0.01)] = [at1] * 3
            points[(acc.FIVE, lab, "total_mbps", 0.05)] = [3.8] * 3
        points[(acc.FIVE, "venodb", "total_mbps", 0.05)] = [venodb_at5] * 3
        return acc._f7_total(_results({}, points), "partly")

    # 4.5 Mbit/s is above 85% of the 5 Mbit/s link, 3.0 is not.
    assert "every algorithm nearly fills the 5 Mbit/s link" in run(4.5, 4.1)
    assert "nearly fills" not in run(3.0, 4.1)
    assert "At 5% VenoDB leads" in run(4.5, 4.1)
    assert "At 5% VenoDB does not lead" in run(4.5, 3.5)


def test_f9_rtt_short_flow_and_fairer_branches():
    def run(venodb_jain: float, short: float) -> str:
        values = {
            **_flat(acc.RTT, "jain", {"venodb": venodb_jain, "veno": 0.93}),
            **_flat(acc.RTT, "short_mbps", {"venodb": short, "veno": short}),
            **_flat(acc.RTT, "long_mbps", {"venodb": 0.7, "veno": 0.7}),
        }
        return acc._f9_rtt(_results(values), "partly")

    assert "The short flow gets more with both" in run(0.94, 1.1)
    assert "Short over long flow" in run(0.94, 0.6)
    assert "VenoDB is the fairer on average, but not measurably" in run(0.94, 1.1)
    assert "VenoDB is not fairer than Veno here." in run(0.90, 1.1)


def test_f11_friendliness_overlap_apart_or_behind():
    def run(venodb_pair: list[float]) -> str:
        values = {
            (acc.FRIEND, "venodb", "pair_mbps"): venodb_pair,
            (acc.FRIEND, "veno", "pair_mbps"): [1.65, 1.70, 1.75],
            **_flat(acc.FRIEND, "reno_share", {"venodb": 0.49, "reno": 0.49}),
        }
        return acc._f11_friend(_results(values), "partly")

    # [1.6, 1.9, 2.2]: mean 1.9 above 1.7 but its interval reaches below 1.75; [2.0, 2.01, 2.02] lies clear.
    assert "on average (×1.12), but the two intervals overlap" in run([1.6, 1.9, 2.2])
    assert "takes more than the Veno pair (×1.18), as in the paper" in run([2.0, 2.01, 2.02])
    assert "does not take more than the Veno pair" in run([1.5, 1.5, 1.5])
    assert "NewReno keeps a fair part beside VenoDB" in run([1.5, 1.5, 1.5])


# ---------------------------------------------------------------- 002


def test_f4_09_says_which_side_of_the_papers_values_ours_lie():
    def run(rovegas: float, vegas: float) -> str:
        values = {
            **_flat(acc.SINGLE, "during_kbps", {"rovegas": rovegas, "vegas": vegas}),
            **_flat(acc.SINGLE, "aqt_handed", {"rovegas": 100.0}),
        }
        return acc._f4_09(_results(values), "partly")

    text = run(620.0, 413.0)
    assert "our Vegas keeps more than the paper's 348 kbit/s and our RoVegas less than its 776" in text
    assert "no more than the paper's 348 kbit/s and our RoVegas as much as its 776" in run(800.0, 340.0)
    assert "RoVegas does not keep more than Vegas here." in run(400.0, 413.0)


# ---------------------------------------------------------------- 003


def _cbr(w_cwnd: float, v_cwnd: float, w_growth: float, v_util: float) -> Results:
    return _results(
        {
            **_flat(acc.CBR, "cwnd_pre_cbr_pkts", {"vegas-w": w_cwnd, "vegas": v_cwnd}),
            **_flat(acc.CBR, "bdp_pkts", {"vegas-w": 794.0}),
            **_flat(acc.CBR, "growth_pkts_per_s", {"vegas-w": w_growth, "vegas": 1.9}),
            **_flat(acc.CBR, "util_cbr", {"vegas-w": 1.0, "vegas": v_util}),
            **{(acc.CBR, lab, "recovered"): [0.0, 0.0, 0.0] for lab in ("vegas-w", "vegas")},
        }
    )


def test_f23_startup_attributes_the_window_only_when_the_numbers_fit():
    # 736 > 1.5 x 381, below the 794-packet path, same growth: the window came from before the 40 s.
    text = acc._f23_startup(_cbr(736.0, 381.0, 1.9, 0.96), "not")
    assert "consistent with IV.A extending Vegas-W's slow start" in text
    # 1.9 packets/s x 0.52 s is about one packet per round trip.
    assert "adds about one packet per 520 ms round trip" in text
    assert "τ" in text
    assert "IV.C's re-entry into slow start" in text
    assert "IV.A extending" not in acc._f23_startup(_cbr(900.0, 381.0, 1.9, 0.96), "not")
    assert "IV.A extending" not in acc._f23_startup(_cbr(736.0, 381.0, 5.0, 0.96), "not")
    assert "one packet per 520 ms" not in acc._f23_startup(_cbr(736.0, 381.0, 5.0, 0.96), "not")


def test_f23_step_utilisation_during_the_cbr():
    assert "both give way to the CBR without leaving the link idle" in acc._f23_step(_cbr(736, 381, 1.9, 0.96), "")
    text = acc._f23_step(_cbr(736, 381, 1.9, 0.90), "partly")
    assert "Vegas-W keeps the link fuller" in text
    assert "well below Vegas-W's" in text
    text = acc._f23_step(_cbr(736, 600, 1.9, 0.90), "partly")
    assert "Vegas-W keeps the link fuller" in text
    assert "well below" not in text
    assert "'responds swiftly' is not what our Vegas-W does" in text


def test_f45_route_growing_or_shrinking_vegas_w_window():
    def run(w_ratio: float) -> str:
        values = {
            **_flat(acc.ROUTE, "cwnd_ratio", {"vegas-w": w_ratio, "vegas": 0.98}),
            **_flat(acc.ROUTE, "rtt_ratio", {"vegas-w": 2.56}, spread=0.0),
            **_flat(acc.ROUTE, "cwnd_before_pkts", {"vegas-w": 700.0, "vegas": 350.0}),
            **_flat(acc.ROUTE, "change_mbps", {"vegas-w": 5.0, "vegas": 2.4}),
            **_flat(acc.ROUTE, "bdp_new_pkts", {"vegas-w": 2708.0}),
        }
        return acc._f45_route(_results(values), "reproduced")

    grows = run(1.04)
    assert "Vegas-W's window grows instead" in grows
    assert "steps ×2.56 in one ACK" in grows
    assert "was already ×2.00 of Vegas's" in grows
    assert "Neither comes near the new route's 20 Mbit/s" in grows
    shrinks = run(0.95)
    assert "Vegas-W's window shrinks as well" in shrinks
    assert "grows instead" not in shrinks


def test_t1_retransmissions_start_up_only_when_most_were_early():
    def run(share: float) -> str:
        values = {
            **_flat(acc.E1, "total_retx_KB", {"reno/reno": 52.0, "reno/vegas": 19.0, "vegas/reno": 45.0}),
            **_flat(acc.E1, "total_retx_KB", {"vegas/vegas": 7.0}),
            **_flat(acc.E1, "early_retx_share", {"vegas/vegas": share}, spread=0.0),
        }
        return acc._t1_retx(_results(values), "partly")

    assert "90% of Vegas/Vegas's retransmitted bytes" in run(0.9)
    assert "mostly at start-up" in run(0.9)
    assert "mostly at start-up" not in run(0.2)
    # Near the paper's 0.4 KB: no "does not come down" sentence, whatever the share.
    values = {
        **_flat(acc.E1, "total_retx_KB", {"reno/reno": 52.0, "vegas/vegas": 0.2}),
        **_flat(acc.E1, "early_retx_share", {"vegas/vegas": 1.0}, spread=0.0),
    }
    assert "does not come down" not in acc._t1_retx(_results(values), "unresolved")


def test_f2_2pct_lead_or_not():
    def run(venodb: float) -> str:
        points = {
            (acc.SWEEP, lab, "goodput_mbps", 0.02): [m] * 3
            for lab, m in {"venodb": venodb, "veno": 1.3, "westwood": 1.4, "reno": 1.0}.items()
        }
        return acc._f2_2pct(_results({}, points), "partly")

    assert "VenoDB leads, by less than the paper's margins" in run(1.45)
    assert "VenoDB does not lead" in run(1.35)


def test_f5_load_1_and_sweep_depend_on_the_ratios():
    def run(rovegas_at: dict[float, float]) -> tuple[str, str]:
        points = {}
        for p, x in rovegas_at.items():
            points[(acc.LOADS, "rovegas", "goodput_kbps", p)] = [x] * 3
            points[(acc.LOADS, "vegas", "goodput_kbps", p)] = [100.0] * 3
        r = _results({}, points)
        return acc._f5_10(r, "partly"), acc._f5_sweep(r, "partly")

    # ×3 at load 1 and ×1 at load 0: far ahead by less than ×6.75, and the gap grows.
    at_one, sweep = run({0.0: 100.0, 1.0: 300.0})
    assert "RoVegas is far ahead, as in the paper, but by a smaller ratio" in at_one
    assert "the gap grows with the load" in sweep
    # ×1.5 at load 1 is not "far ahead"; a falling ratio is not a growing gap.
    at_one, sweep = run({0.0: 200.0, 1.0: 150.0})
    assert "far ahead" not in at_one
    assert "the gap grows" not in sweep
    # Vegas at zero: no ratio, no crash, no claim.
    points = {(acc.LOADS, lab, "goodput_kbps", 1.0): [0.0] * 3 for lab in ("rovegas", "vegas")}
    assert "far ahead" not in acc._f5_10(_results({}, points), "not")


def test_f23_startup_reports_first_reach_censored_and_held_apart():
    values = {
        (acc.CBR, "vegas-w", "t_first_s"): [5.8, 6.2, 80.0],
        (acc.CBR, "vegas-w", "reached_first"): [1.0, 1.0, 0.0],
        (acc.CBR, "vegas", "t_first_s"): [math.nan, math.nan, math.nan],
        (acc.CBR, "vegas", "reached_first"): [0.0, 0.0, 0.0],
        (acc.CBR, "vegas-w", "reached_full"): [0.0, 1.0, 0.0],
        (acc.CBR, "vegas", "reached_full"): [0.0, 0.0, 0.0],
    }
    text = acc._f23_startup(_results(values), "unresolved")
    # The censored run is left out of the time, not counted as 80 s.
    assert "Vegas-W 6.0 ± 2.5 s (2 of 3 runs), Vegas never (0 of 3 runs)" in text
    assert "Held at ≥ 0.95 for 1 s, reported apart: Vegas-W in 1 of 3 runs and Vegas in 0 of 3" in text
