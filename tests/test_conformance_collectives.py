"""The generated suite's multi-process cases (conformance/generated/collectives.py): the
oracles against the spec's own examples, the cases on the reference backend's process grid,
other backends refusing them, export of the process counts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stablehlo_ref.conformance import get_backend, run_suite
from stablehlo_ref.conformance.backends import Backend, BackendUnsupported
from stablehlo_ref.conformance.cases import Case, Rule, process_labels
from stablehlo_ref.conformance.generated import FAST_TYPES, generate_cases
from stablehlo_ref.conformance.generated import collectives as C
from stablehlo_ref.conformance.runner import run_case


# ------------------------------------------------------------------ oracles vs the spec's examples

def test_process_group_strategies_match_the_spec_examples():
    assert C.process_groups("cross_replica", [[0, 1], [2, 3]], 4, 2) == [
        [(0, 0), (1, 0)], [(0, 1), (1, 1)], [(2, 0), (3, 0)], [(2, 1), (3, 1)]]
    assert C.process_groups("cross_partition", [[0, 1]], 4, 2) == [
        [(0, 0), (0, 1)], [(1, 0), (1, 1)], [(2, 0), (2, 1)], [(3, 0), (3, 1)]]
    assert C.process_groups("cross_replica_and_partition", [[0, 1], [2, 3]], 4, 2) == [
        [(0, 0), (1, 0), (0, 1), (1, 1)], [(2, 0), (3, 0), (2, 1), (3, 1)]]
    assert C.process_groups("flattened_ids", [[0, 1, 2, 3], [4, 5, 6, 7]], 4, 2) == [
        [(0, 0), (0, 1), (1, 0), (1, 1)], [(2, 0), (2, 1), (3, 0), (3, 1)]]
    with pytest.raises(ValueError):
        C.process_groups("cross_replica", [[0, 4]], 4, 1)
    assert C.reduce_mode(0, False) == "cross_replica" and C.reduce_mode(1, False) == "cross_replica_and_partition"
    assert C.reduce_mode(1, True) == "flattened_ids" and C.cross_mode(1) == "cross_partition"
    with pytest.raises(ValueError):
        C.reduce_mode(0, True)


def test_all_gather_oracle_spec_example():
    xs = {(0, 0): [np.array([[1, 2], [3, 4]]), np.array([[11, 12], [13, 14]])],
          (1, 0): [np.array([[5, 6], [7, 8]]), np.array([[15, 16], [17, 18]])]}
    out = C.oracle_all_gather(xs, C.process_groups("cross_replica", [[0, 1]], 2, 1), 1)
    for me in xs:
        assert out[me][0].tolist() == [[1, 2, 5, 6], [3, 4, 7, 8]]
        assert out[me][1].tolist() == [[11, 12, 15, 16], [13, 14, 17, 18]]


def test_all_to_all_oracle_spec_example():
    xs = {(0, 0): [np.array([[1, 2, 3, 4], [5, 6, 7, 8]])],
          (1, 0): [np.array([[9, 10, 11, 12], [13, 14, 15, 16]])]}
    out = C.oracle_all_to_all(xs, C.process_groups("cross_replica", [[0, 1]], 2, 1), 1, 0, 2)
    assert out[(0, 0)][0].tolist() == [[1, 2], [5, 6], [9, 10], [13, 14]]
    assert out[(1, 0)][0].tolist() == [[3, 4], [7, 8], [11, 12], [15, 16]]


def test_permute_and_broadcast_oracles_fill_zeros():
    xs = {(r, 0): np.array([r + 1]) for r in range(3)}
    out = C.oracle_permute(xs, C.process_groups("cross_replica", [[0, 1], [1, 2]], 3, 1), np.zeros(1, int))
    assert [out[(r, 0)].tolist() for r in range(3)] == [[0], [1], [2]]
    ys = {(r, 0): [np.array([r + 1])] for r in range(4)}
    out = C.oracle_broadcast(ys, C.process_groups("cross_replica", [[2, 1]], 4, 1), [0], [np.zeros(1, int)])
    assert [out[(r, 0)][0].tolist() for r in range(4)] == [[0], [3], [3], [0]]


def test_reduction_oracle_wraps_and_float_values_stay_exact():
    assert C.reduce_values("add", "i8", [[127, -128], [1, -1]]) == [-128, 127]
    assert C.reduce_values("mul", "ui8", [[16], [16], [2]]) == [0]
    assert C.reduce_values("max", "i1", [[False, False], [True, False]]) == [True, False]
    # f4E2M1FN holds 0..4 but not 5: four processes of values in -1..1 at most
    assert C.reduce_value_set("f4E2M1FN", "add", 4) == (-1, 1)
    assert C.reduce_value_set("f32", "add", 4) == (-2, 2)
    assert C.reduce_value_set("f8E8M0FNU", "add", 2) is None        # no zero, no negatives
    assert not C.has_zero("f8E8M0FNU") and C.has_zero("f4E2M1FN") and C.has_zero("i8")


# ------------------------------------------------------------------ the cases

_FAST = []


def fast_cases(op=None):
    """The fast subset of this module's cases (built once; `generate_cases` builds them the
    same way, test_conformance_generated checks the whole)."""
    if not _FAST:
        _FAST.extend(C.all_collectives(False, FAST_TYPES))
    want = op if op is None or "." in op else f"stablehlo.{op}"
    return [c for c in _FAST if want is None or c.op == want]


OPS = ["all_gather", "all_reduce", "all_to_all", "reduce_scatter", "collective_permute",
       "collective_broadcast", "collective_reduce", "cross-replica-sum", "async_start", "async_done",
       "after_all", "create_token", "outfeed", "send", "recv", "infeed"]


def test_fast_collective_cases_pass_on_the_reference():
    cases = fast_cases()
    assert [c.id for c in generate_cases(op="all_to_all")] == [c.id for c in fast_cases("all_to_all")]
    assert {c.op for c in cases} == {f"stablehlo.{o}" for o in OPS}
    assert any(c.num_partitions > 1 for c in cases) and any(c.num_replicas == 4 for c in cases)
    assert {c.element_type for c in cases if c.op == "stablehlo.all_gather"} == set(FAST_TYPES)
    with get_backend("reference") as b:
        rep = run_suite(b, cases)
    assert rep.counts()["pass"] == len(cases), rep.format()[-3000:]


def test_a_wrong_expectation_fails_on_the_reference():
    """The comparison looks at every process's outputs: a case whose expectation for one
    process is altered fails (so the passing cases above do check the kernels)."""
    c = [c for c in fast_cases("all_gather") if c.element_type == "i64"][0]
    assert c.num_replicas * c.num_partitions > 1
    exp = [e.copy() for e in c.expected]
    exp[-1].reshape(-1)[0] += 1
    bad = Case(c.id, c.program, c.inputs, exp, c.element_types, c.rules, c.labels, c.expected_from, c.ops,
               num_replicas=c.num_replicas, num_partitions=c.num_partitions)
    with get_backend("reference") as b:
        assert run_case(b, c).status == "pass"
        o = run_case(b, bad)
    assert o.status == "fail" and c.labels[-1] in o.message


def test_collective_permute_without_pairs_gives_zeros():
    """Interpreter bug found by the generated suite: an empty source_target_pairs was read as
    one group of all replicas (and crashed); nobody receives anything, so all get zeros."""
    prog = """func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<> : tensor<0x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  "func.return"(%0) : (tensor<2xi32>) -> ()
}
"""
    xs = [np.array([1, 2], np.int32), np.array([3, 4], np.int32), np.array([5, 6], np.int32)]
    with get_backend("reference") as b:
        out = b.run_processes(prog, xs, 3, 1)
    assert [o.tolist() for o in out] == [[0, 0]] * 3


def test_reference_grid_checks_the_argument_count():
    c = fast_cases("all_gather")[0]
    bad = Case(c.id, c.program, c.inputs[:-1], c.expected, c.element_types, c.rules, c.labels,
               c.expected_from, c.ops, num_replicas=c.num_replicas, num_partitions=c.num_partitions)
    with get_backend("reference") as b:
        o = run_case(b, bad)
    assert o.status == "error" and "per process" in o.message


def test_single_process_backends_report_multi_process_cases_unsupported():
    class OneProcess(Backend):
        name = "one-process"

        def run(self, program, inputs, timeout=None):
            raise AssertionError("a multi-process case must not reach run()")
    c = fast_cases("collective_permute")[0]
    o = run_case(OneProcess(), c)
    assert o.status == "unsupported" and "multi-process" in o.message and "one-process" in o.message
    with pytest.raises(BackendUnsupported):
        OneProcess().run_processes("", [], 2, 1)


def test_process_labels():
    assert process_labels(2) == ["0", "1"]
    assert process_labels(1, 2, 2) == ["r0p0.0", "r0p1.0", "r1p0.0", "r1p1.0"]


def test_export_carries_process_counts(tmp_path):
    from stablehlo_ref.conformance.generated.export import export_generated, load_generated_export
    cases = [c for c in fast_cases("reduce_scatter") if c.num_partitions == 2][:2] + generate_cases(op="add")[:1]
    path = export_generated(cases, str(tmp_path), target="1.0.0")
    m = json.loads(Path(path).read_text())
    e = m["cases"][0]
    assert (e["num_replicas"], e["num_partitions"]) == (cases[0].num_replicas, 2)
    assert [x["process"] for x in e["inputs"]] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert len(e["outputs"]) == 4 and e["outputs"][3]["process"] == [1, 1]
    assert m["cases"][-1]["num_replicas"] == 1 and "process" not in m["cases"][-1]["inputs"][0]
    back = load_generated_export(str(tmp_path))
    assert [(c.num_replicas, c.num_partitions) for c in back] == [(c.num_replicas, c.num_partitions) for c in cases]
    with get_backend("reference") as b:
        rep = run_suite(b, back)
    assert rep.counts()["pass"] == len(cases), rep.format()[-2000:]


RING = """func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %t = "stablehlo.after_all"() : () -> !stablehlo.token
  %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<PAIRS> : tensor<Nx2xi64>} : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  %r:2 = "stablehlo.recv"(%s) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<PAIRS> : tensor<Nx2xi64>} : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  "func.return"(%r#0) : (tensor<2xi32>) -> ()
}
"""


def test_send_recv_follow_source_target_pairs():
    """Interpreter bug found by the generated suite: send/recv ignored source_target_pairs and
    shared one queue per channel, so in a ring every process got whichever message came
    first (often its own). Each process now receives from its pair's source."""
    prog = RING.replace("PAIRS", "[[0, 1], [1, 2], [2, 3], [3, 0]]").replace("Nx2", "4x2")
    xs = [np.array([k, 10 * k], np.int32) for k in range(4)]
    with get_backend("reference") as b:
        for _ in range(3):                 # the old queue gave thread-order-dependent results
            out = b.run_processes(prog, xs, 1, 4)
            assert [o.tolist() for o in out] == [[3, 30], [0, 0], [1, 10], [2, 20]]
        bad = RING.replace("PAIRS", "[[0, 1]]").replace("Nx2", "1x2")
        with pytest.raises(Exception, match="target of none"):
            b.run_processes(bad, xs[:2], 1, 2)


def test_worker_adapters_refuse_host_communication_before_starting():
    """xla/upstream have no host or peer side: outfeed would block XLA CPU for the whole
    timeout and crash upstream's interpreter, so those programs are unsupported up front
    (checked before any worker starts: runs without jax)."""
    from stablehlo_ref.conformance.backends import XlaBackend
    prog = [c for c in fast_cases("outfeed")][0].program
    b = XlaBackend()
    with pytest.raises(BackendUnsupported, match="stablehlo.outfeed"):
        b.run(prog, [])
    assert b.worker is None
    assert not b.HOST_OPS.search(fast_cases("after_all")[0].program)


# ------------------------------------------------------------------ infeed (host-fed values)

_INFEED = {}


def _infeed_cases(full=False):
    """This module's infeed cases (what generate_cases(op="infeed") selects, built directly)."""
    if full not in _INFEED:
        _INFEED[full] = C.infeed_cases(full, None if full else FAST_TYPES)
    return list(_INFEED[full])


def _case_with_feeds(c, feeds):
    return Case(c.id, c.program, c.inputs, c.expected, c.element_types, c.rules, c.labels, c.expected_from,
                c.ops, num_replicas=c.num_replicas, num_partitions=c.num_partitions, infeed=feeds)


def test_infeed_cases_cover_the_admitted_types_and_pass_on_the_reference():
    from stablehlo_ref import spec
    from stablehlo_ref.conformance.generated.values import admitted
    full = _infeed_cases(full=True)
    assert {c.element_type for c in full} >= set(admitted(spec.op("stablehlo.infeed").results[0].type))
    assert {"!quant.uniform<i8:f32>", "token"} <= {c.element_type for c in full}
    assert all(c.infeed for c in full) and any(c.num_partitions == 2 and c.num_replicas == 2 for c in full)
    fast = _infeed_cases()
    assert {c.element_type for c in fast} >= set(FAST_TYPES)
    assert [c.id for c in fast] == [c.id for c in fast_cases("infeed")]
    with get_backend("reference") as b:
        rep = run_suite(b, full)
    assert rep.counts()["pass"] == len(full), rep.format()[-3000:]


def test_infeed_cases_check_the_order_and_the_queue_of_each_process():
    """The expected values are the fed ones, in order, per process: feeding them in another
    order, or to another process, fails (so the passing cases do look at the kernel)."""
    cases = {c.id: c for c in _infeed_cases(full=True)}
    two = cases["generated/stablehlo.infeed/i32/two_infeeds_in_order"]
    grid = cases["generated/stablehlo.infeed/i32/per_process_r2p2"]
    swapped = [type(f)(f.values, f.types, (f.process[0], 1 - f.process[1])) for f in grid.infeed]
    one = cases["generated/stablehlo.infeed/i32/one_result"]
    wrong = [type(f)([f.values[0] + 1], f.types, f.process) for f in one.infeed]
    with get_backend("reference") as b:
        assert run_case(b, two).status == "pass"
        o = run_case(b, _case_with_feeds(two, list(reversed(two.infeed))))
        assert o.status == "error" and "does not match" in o.message
        o = run_case(b, _case_with_feeds(grid, swapped))
        assert o.status == "fail" and "r0p0.0" in o.message
        assert run_case(b, _case_with_feeds(one, wrong)).status == "fail"
        o = run_case(b, _case_with_feeds(two, two.infeed[:1]))
        assert o.status == "error" and "queue is empty" in o.message


def test_backends_that_cannot_feed_report_infeed_cases_unsupported():
    from stablehlo_ref.conformance.backends import IreeBackend, XlaBackend

    class Plain(Backend):
        name = "plain"

        def run(self, program, inputs, timeout=None):
            raise AssertionError("an infeed case must not reach run()")
    c = _infeed_cases()[0]
    o = run_case(Plain(), c)
    assert o.status == "unsupported" and "infeed" in o.message and "plain" in o.message
    for b in (XlaBackend(), IreeBackend()):
        with pytest.raises(BackendUnsupported, match="infeed"):
            b.run_infeed(c.program, c.inputs, c.infeed)
        assert b.worker is None           # refused before any worker starts


def test_upstream_infeed_wrapper_runs_the_case_through_run_parallel():
    """upstream's adapter wraps @main in interpreter.run_parallel with one function per feed;
    the wrapped program means the same on our interpreter (no jax needed)."""
    from stablehlo_ref.conformance.backends import _infeed_wrapper
    from stablehlo_ref.conformance.compare import compare_case
    cases = {c.id: c for c in _infeed_cases(full=True)}
    picked = [cases[f"generated/stablehlo.infeed/{et}/{v}"] for et, v in
              [("f32", "one_result"), ("bf16", "two_infeeds_in_order"), ("i1", "rank0"), ("f8E4M3FN", "size0"),
               ("ui4", "one_result"), ("f64", "two_infeeds_in_order")]]
    with get_backend("reference") as b:
        for c in picked:
            text = _infeed_wrapper(c.program, c.infeed)
            assert "interpreter.run_parallel" in text and "@infeed_feed_0" in text
            assert compare_case(c, b.run(text, c.inputs)) is None, c.id


def test_upstream_refuses_infeeds_it_cannot_feed():
    from stablehlo_ref.conformance.backends import UpstreamBackend
    cases = {c.id: c for c in _infeed_cases(full=True)}
    b = UpstreamBackend()
    for cid, why in [("f32/two_results", "2 tensor"), ("token/token_only/f32", "0 tensor"),
                     ("!quant.uniform<i8:f32>/per_tensor", "quantized"), ("f32/per_process_r1p2", "multi-process")]:
        c = cases[f"generated/stablehlo.infeed/{cid}"]
        with pytest.raises(BackendUnsupported, match=why):
            b.run_infeed(c.program, c.inputs, c.infeed, c.num_replicas, c.num_partitions)
    assert b.worker is None


def test_export_carries_infeed_values(tmp_path):
    from stablehlo_ref.conformance import export_cases, load_exported
    from stablehlo_ref.conformance.generated.export import export_generated, load_generated_export
    cases = [c for c in _infeed_cases(full=True) if c.variant in ("two_infeeds_in_order", "per_axis_dim1",
                                                                  "per_process_r1p2", "token_only/f32")
             and c.element_type in ("bf16", "i2", "f32", "!quant.uniform<i8:f32>", "token")]
    assert len(cases) == 6
    path = export_generated(cases, str(tmp_path / "gen"), target="1.0.0")
    m = json.loads(Path(path).read_text())
    e = next(x for x in m["cases"] if x["id"].endswith("bf16/two_infeeds_in_order"))
    assert [len(f["values"]) for f in e["infeed"]] == [1, 1] and e["infeed"][1]["values"][0]["type"] == "tensor<4xbf16>"
    assert e["infeed"][0]["process"] == [0, 0] and (tmp_path / "gen" / e["infeed"][0]["values"][0]["file"]).is_file()
    e = next(x for x in m["cases"] if x["id"].endswith("per_process_r1p2"))
    assert [f["process"] for f in e["infeed"]] == [[0, 0], [0, 0], [0, 1], [0, 1]]
    for back in (load_generated_export(str(tmp_path / "gen")),
                 load_exported(str(Path(export_cases(cases, str(tmp_path / "plain"))).parent))):
        for a, c in zip(cases, back):
            assert [(f.types, f.process) for f in a.infeed] == [(f.types, f.process) for f in c.infeed]
            for fa, fc in zip(a.infeed, c.infeed):
                assert all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(fa.values, fc.values))
        with get_backend("reference") as b:
            rep = run_suite(b, back)
        assert rep.counts()["pass"] == len(cases), rep.format()[-2000:]


def test_upstream_runs_single_tensor_infeeds():
    pytest.importorskip("jax")
    cases = {c.id: c for c in _infeed_cases(full=True)}
    with get_backend("upstream") as b:
        ok, why = b.available()
        if not ok:
            pytest.skip(why)
        for cid in ("f32/one_result", "bf16/two_infeeds_in_order", "i2/rank0", "f8E5M2/size0"):
            o = run_case(b, cases[f"generated/stablehlo.infeed/{cid}"], timeout=120)
            assert o.status == "pass", (cid, o.message)
