"""Conformance reports (JSON + schema, JUnit XML, HTML in headless Chromium, terminal summary,
progress bar), capability profiles and `validate --profile`, backend plug-ins (module:Class,
entry points, the worked example in examples/vendor_backend), shards, merged reports and
campaigns on a Dask LocalCluster."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

from stablehlo_ref.cli import main as cli_main
from stablehlo_ref.conformance import BackendError, BackendUnsupported, ReferenceBackend, extract_cases, run_suite
from stablehlo_ref.conformance.campaign import merge_reports, parse_shard, reports_from_json, run_campaign, shard
from stablehlo_ref.conformance.html_report import COLOURS, html_report
from stablehlo_ref.conformance.junit import junit_xml
from stablehlo_ref.conformance.profile import check_model, load_profile, profile_json
from stablehlo_ref.conformance.report import Progress, category, report_json, validate_json
from stablehlo_ref.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "vendor_backend"

# Six small checked programs: ops x types with known answers (upstream's check-dialect form).
PROGRAMS = """
func.func @add_op_test_si32() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}

// -----

func.func @add_op_test_f32() {
  %0 = stablehlo.constant dense<[1.5, 1.0e-40]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  %2 = stablehlo.constant dense<[3.0, 2.0e-40]> : tensor<2xf32>
  check.expect_close %1, %2, max_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>
  func.return
}

// -----

func.func @floor_op_test_f32() {
  %0 = stablehlo.constant dense<[-1.5, -1.0e-40, 2.5]> : tensor<3xf32>
  %1 = stablehlo.floor %0 : tensor<3xf32>
  check.expect_eq_const %1, dense<[-2.0, -1.0, 2.0]> : tensor<3xf32>
  func.return
}

// -----

func.func @exponential_op_test_f32() {
  %0 = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %1 = stablehlo.exponential %0 : tensor<2xf32>
  %2 = stablehlo.constant dense<[1.0, 2.71828182]> : tensor<2xf32>
  check.expect_close %1, %2, max_ulp_difference = 2 : tensor<2xf32>, tensor<2xf32>
  func.return
}

// -----

func.func @multiply_op_test_si32() {
  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[9, 16]> : tensor<2xi32>
  func.return
}

// -----

func.func @sine_op_test_f64() {
  %0 = stablehlo.constant dense<[0.0]> : tensor<1xf64>
  %1 = stablehlo.sine %0 : tensor<1xf64>
  check.expect_almost_eq_const %1, dense<[0.0]> : tensor<1xf64>
  func.return
}
"""


class QuirkyBackend(ReferenceBackend):
    """The reference interpreter with a vendor's quirks, one of each kind a report shows:
    exponential 0.1% off, far beyond its 2 ULP (every value finite), integer multiply
    wrong, f64 unsupported, floor failing to compile; f32 add passes."""
    name = "quirky"

    def run(self, program, inputs, timeout=None):
        if "stablehlo.sine" in program:
            raise BackendUnsupported("f64 sine is not implemented by this device")
        if "stablehlo.floor" in program:
            raise BackendError("floor: no lowering for this shape", "compile")
        outs = super().run(program, inputs, timeout)
        if "stablehlo.exponential" in program:
            return [o * np.float32(1.001) for o in outs]
        if "stablehlo.multiply" in program:
            return [o + 1 for o in outs]
        return outs


class FlushingBackend(ReferenceBackend):
    """The reference interpreter behind a device that flushes subnormal f32 values to zero on
    input and output (as XLA CPU does): cases with subnormals fail, the others pass."""
    name = "flushing"

    def run(self, program, inputs, timeout=None):
        tiny = float(np.finfo(np.float32).tiny)

        def flush(m):
            return "0.0" if 0 < abs(float(m.group(0))) < tiny else m.group(0)
        program = re.sub(r"[-+]?\d+\.\d*[eE][-+]?\d+", flush, program)
        outs = super().run(program, inputs, timeout)
        return [np.where(np.abs(o) < tiny, np.float32(0), o).astype(o.dtype) if o.dtype == np.float32 else o
                for o in outs]


def _cases():
    return extract_cases(PROGRAMS, "mine/ops.mlir")


def _quirky_report(known=None):
    return run_suite(QuirkyBackend(), _cases(), known=known)


# ---------------------------------------------------------------------------- JSON

def test_report_categories_and_json_schema():
    known = {"mine/ops.mlir#4@multiply_op_test_si32": "fail: this device's multiply is off by one"}
    rep = _quirky_report(known)
    cats = {o.id.split("@")[1]: category(o) for o in rep.outcomes}
    assert cats == {"add_op_test_si32": "pass", "add_op_test_f32": "pass", "floor_op_test_f32": "error",
                    "exponential_op_test_f32": "tolerance", "multiply_op_test_si32": "fail",
                    "sine_op_test_f64": "unsupported"}
    doc = report_json(rep)
    validate_json(doc)
    by = {c["id"].split("@")[1]: c for c in doc["cases"]}
    exp = by["exponential_op_test_f32"]
    assert exp["op"] == "stablehlo.exponential" and exp["element_type"] == "f32"
    assert exp["verdict"] == "unexpected" and exp["known_failure"] is None
    assert exp["first_index"] == [0] and exp["max_ulp_error"] > 1000
    assert abs(exp["max_abs_error"] - 2.71828182 * 0.001) < 1e-5
    mul = by["multiply_op_test_si32"]
    assert mul["verdict"] == "expected" and mul["known_failure"].startswith("fail: this device")
    assert mul["max_abs_error"] == 1.0 and mul["max_ulp_error"] is None and mul["first_index"] == [0]
    assert by["add_op_test_si32"]["verdict"] == "expected" and by["add_op_test_si32"]["max_abs_error"] == 0.0
    s = doc["summary"]
    assert (s["pass"], s["fail"], s["error"], s["unsupported"], s["tolerance_exceeded"]) == (2, 2, 1, 1, 1)
    assert (s["expected_failures"], s["unexpected_failures"]) == (1, 2)
    # the schema is a real check: a record without its verdict, or a wrong category, is refused
    import jsonschema
    bad = json.loads(json.dumps(doc))
    del bad["cases"][0]["verdict"]
    with pytest.raises(jsonschema.ValidationError):
        validate_json(bad)
    bad = json.loads(json.dumps(doc))
    bad["cases"][0]["category"] = "tolerance"       # a pass cannot be a tolerance failure
    with pytest.raises(jsonschema.ValidationError):
        validate_json(bad)


def test_terminal_summary_separates_known_from_unexpected():
    known = {"mine/ops.mlir#4@multiply_op_test_si32": "fail: this device's multiply is off by one"}
    text = _quirky_report(known).format()
    head, _, rest = text.partition("known failure(s), as listed:")
    assert "fail: this device's multiply is off by one" in rest.split("unexpected failure(s)")[0]
    unexpected = rest.split("unexpected failure(s)")[1]
    assert "exponential_op_test_f32" in unexpected and "floor_op_test_f32" in unexpected
    assert "multiply_op_test_si32" not in unexpected
    assert text.splitlines()[-1].startswith("quirky: 2 passed, 2 failed, 1 errors (1 beyond tolerance only, "
                                            "1 known, 2 unexpected), 1 unsupported")


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    rep = _quirky_report()
    tty = Tty()
    with Progress(len(rep.outcomes), desc="conformance", stream=tty, mininterval=0) as bar:
        for o in rep.outcomes:
            bar.update(o)
    assert "conformance" in tty.getvalue() and "6/6" in tty.getvalue()
    plain = io.StringIO()
    with Progress(len(rep.outcomes), stream=plain) as bar:
        for o in rep.outcomes:
            bar.update(o)
    assert plain.getvalue() == ""


# --------------------------------------------------------------------------- JUnit

def _check_junit_schema(root):
    """The rules of the JUnit XML schema CI systems read (Ant's junit task format as Jenkins'
    junit-10.xsd states it): testsuites > testsuite > testcase; counts are integers and add up;
    a testcase has name, classname, time and at most one of failure/error/skipped, which carry
    a message."""
    assert root.tag == "testsuites"
    total = 0
    for suite in root:
        assert suite.tag == "testsuite"
        for a in ("name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname"):
            assert a in suite.attrib, a
        cases = [c for c in suite if c.tag == "testcase"]
        assert all(c.tag in ("testcase", "properties") for c in suite)
        assert int(suite.get("tests")) == len(cases)
        kinds = {"failure": 0, "error": 0, "skipped": 0}
        for c in cases:
            assert c.get("name") and c.get("classname") and float(c.get("time")) >= 0
            results = [x for x in c if x.tag in kinds]
            assert len(results) <= 1
            assert all(x.tag in ("failure", "error", "skipped", "properties") for x in c)
            for x in results:
                kinds[x.tag] += 1
                assert x.get("message")
        assert (int(suite.get("failures")), int(suite.get("errors")), int(suite.get("skipped"))) == \
            (kinds["failure"], kinds["error"], kinds["skipped"])
        total += len(cases)
    assert int(root.get("tests")) == total


def test_junit_xml(tmp_path):
    known = {"mine/ops.mlir#4@multiply_op_test_si32": "fail: off by one",
             "mine/ops.mlir#0@add_op_test_si32": "pretend: listed but passes"}
    rep = _quirky_report(known)
    data = junit_xml([rep])
    root = ET.fromstring(data)
    _check_junit_schema(root)
    cases = {c.get("name").split("@")[1]: c for c in root.iter("testcase")}
    assert cases["exponential_op_test_f32"].get("classname") == "stablehlo.exponential"
    assert cases["exponential_op_test_f32"].find("failure").get("type") == "tolerance-exceeded"
    assert cases["floor_op_test_f32"].find("error").get("type") == "compile"
    assert cases["sine_op_test_f64"].find("skipped") is not None
    assert cases["multiply_op_test_si32"].find("skipped").get("message") == "known failure: fail: off by one"
    assert cases["add_op_test_si32"].find("failure").get("type") == "stale-known-failure"
    assert cases["add_op_test_f32"].find("failure") is None and cases["add_op_test_f32"].find("error") is None
    # a JUnit reader used by CI result publishers reads it back with the same counts
    junitparser = pytest.importorskip("junitparser", reason="junitparser (test extra) not installed")
    path = tmp_path / "r.xml"
    path.write_bytes(data)
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].tests == 6
    assert (suites[0].failures, suites[0].errors, suites[0].skipped) == (2, 1, 2)
    results = {c.name.split("@")[1]: [type(r).__name__ for r in c.result] for c in suites[0]}
    assert results["exponential_op_test_f32"] == ["Failure"] and results["add_op_test_f32"] == []


def test_junit_has_no_characters_xml_cannot_carry():
    rep = _quirky_report()
    rep.outcomes[2].message = "bad \x00 byte \x1b[31m"
    ET.fromstring(junit_xml([rep]))


# ---------------------------------------------------------------------------- HTML

def test_html_is_self_contained_and_links_cells_to_cases():
    rep = _quirky_report()
    doc = html_report([rep])
    assert "<script" not in doc and "http://" not in doc and "https://" not in doc and "<link" not in doc
    assert 'data-status="tolerance"' in doc and 'data-status="unsupported"' in doc
    hrefs = set(re.findall(r'<td class="k-\w+" data-status="\w+" title="[^"]*"><a href="#([^"]+)"', doc))
    ids = set(re.findall(r'<div id="([^"]+)">', doc))
    assert len(hrefs) == 6 and hrefs == ids


def _png_pixels(data: bytes):
    """(width, height, rows of RGB(A) bytes) of a non-interlaced 8-bit PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="no chromium (Debian: apt-get install chromium)")
def test_html_matrix_renders_in_headless_chromium(tmp_path):
    rep = _quirky_report()
    page = tmp_path / "report.html"
    page.write_text(html_report([rep]), encoding="utf-8")
    shot = tmp_path / "shot.png"
    base = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=900,700"]
    r = subprocess.run(base + [f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert shot.exists(), r.stderr[-2000:]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180).stdout
    # the browser built the matrix: a row per op, a column per element type, cells that link
    assert dom.count('<table class="matrix"') == 1
    for op in ("stablehlo.add", "stablehlo.floor", "stablehlo.exponential", "stablehlo.multiply", "stablehlo.sine"):
        assert f'<th class="op">{op}</th>' in dom
    # and painted it: every status colour of the matrix covers a cell-sized area of the screenshot
    w, h, bpp, rows = _png_pixels(shot.read_bytes())
    assert (w, h) == (900, 700)
    counts = {k: 0 for k in COLOURS}
    want = {tuple(int(v[i:i + 2], 16) for i in (1, 3, 5)): k for k, v in COLOURS.items()}
    for row in rows:
        for x in range(0, w * bpp, bpp):
            k = want.get(tuple(row[x:x + 3]))
            if k:
                counts[k] += 1
    # a cell is about 44x26 px; the legend and summary tags add a little of each colour
    for k in ("pass", "tolerance", "fail", "error", "unsupported"):
        assert counts[k] > 600, counts
    assert counts["pass"] > counts["fail"]         # two passing cells (add si32, add f32), one failing


# ------------------------------------------------------------------------ profiles

MODEL_FLOOR = """func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = stablehlo.floor %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
MODEL_ADD = """func.func @main(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.add %y, %y : tensor<4xi32>
  return %0 : tensor<4xf32>
}
"""


def test_profile_from_a_flushing_device_names_what_it_gets_wrong(tmp_path, capsys):
    # a device that flushes subnormals: the f32 add and floor cases with a subnormal fail
    rep = run_suite(FlushingBackend(), [c for c in _cases() if "sine" not in c.id and "exponential" not in c.id])
    st = {o.id.split("@")[1]: o.status for o in rep.outcomes}
    assert st == {"add_op_test_si32": "pass", "add_op_test_f32": "fail", "floor_op_test_f32": "fail",
                  "multiply_op_test_si32": "pass"}
    # a flushed subnormal is a wrong result, not a precision problem
    assert {category(o) for o in rep.outcomes if o.status == "fail"} == {"fail"}
    prof = tmp_path / "flushing.json"
    prof.write_text(json.dumps(profile_json([rep])))
    model = tmp_path / "floor.mlir"
    model.write_text(MODEL_FLOOR)
    rc = cli_main(["validate", "--profile", str(prof), str(model)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "will not run correctly on flushing" in out
    assert "stablehlo.floor f32" in out and "stablehlo.add f32" in out


def test_profile_says_all_supported(tmp_path, capsys):
    rep = run_suite(ReferenceBackend(), _cases())
    prof = tmp_path / "ref.json"
    prof.write_text(json.dumps(profile_json([rep])))
    model = tmp_path / "m.mlir"
    model.write_text(MODEL_ADD)
    rc = cli_main(["validate", "--profile", str(prof), str(model)])
    out = capsys.readouterr().out
    assert rc == 0 and "all supported on reference" in out and "(2 op/type combination(s))" in out
    findings = check_model(__import__("stablehlo_ref").parse(MODEL_ADD), load_profile(str(prof)))
    assert {(f.op, f.element_type, f.status) for f in findings} == {
        ("stablehlo.add", "f32", "supported"), ("stablehlo.add", "i32", "supported")}


def test_profile_not_covered_and_bad_profiles(tmp_path, capsys):
    rep = run_suite(ReferenceBackend(), [c for c in _cases() if "si32" in c.id])
    prof = tmp_path / "ref.json"
    prof.write_text(json.dumps(profile_json([rep])))
    model = tmp_path / "m.mlir"
    model.write_text(MODEL_FLOOR)
    assert cli_main(["validate", "--profile", str(prof), str(model)]) == 0
    out = capsys.readouterr().out
    assert "no known problem" in out and "stablehlo.floor f32: not covered" in out
    junk = tmp_path / "junk.json"
    junk.write_text('{"cases": []}')
    assert cli_main(["validate", "--profile", str(junk), str(model)]) == 2
    err = capsys.readouterr().err
    assert "not a capability profile" in err and "Traceback" not in err
    assert cli_main(["validate", "--profile", str(tmp_path / "none.json"), str(model)]) == 2


def test_profile_variants_match_attributes(tmp_path):
    from stablehlo_ref import parse
    from stablehlo_ref.conformance.profile import Profile, check_model
    m = parse("""func.func @main(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = stablehlo.compare LT, %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}""")
    def prof(variant, status="fail"):
        return Profile("dev", "", {("stablehlo.compare", "f32"): [
            {"op": "stablehlo.compare", "element_type": "f32", "variant": variant, "status": status,
             "cases": 2, "passed": 1, "failing": [{"id": "x", "category": "fail", "reason": "wrong"}]}]})
    assert check_model(m, prof("comparison_direction=GT"))[0].status == "supported"
    assert check_model(m, prof("comparison_direction=LT"))[0].status == "fails"
    assert check_model(m, prof("subnormal inputs"))[0].status == "condition"
    assert check_model(m, prof("", "pass"))[0].status == "supported"


# -------------------------------------------------------------- plug-ins and the CLI

def test_backend_module_class_and_errors(tmp_path, monkeypatch):
    from stablehlo_ref.conformance import get_backend
    (tmp_path / "my_vendor.py").write_text(
        "from stablehlo_ref.conformance import ReferenceBackend\n"
        "class Dev(ReferenceBackend):\n    name = 'my-dev'\n"
        "    def __init__(self, opt=None):\n        self.opt = opt\n"
        "class NotABackend:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    b = get_backend("my_vendor:Dev")
    assert b.name == "my-dev" and b.opt is None
    assert get_backend("my_vendor:Dev:fast").opt == "fast"
    for spec, msg in (("my_vendor:Nope", "has no Nope"), ("no_such_mod_x:Dev", "cannot import module"),
                      ("my_vendor:NotABackend", "has no run() and available()"), ("nosuch", "unknown backend")):
        with pytest.raises(UsageError, match=re.escape(msg)):
            get_backend(spec)


def _write_plugin_dist(site: Path):
    """A distribution's metadata declaring the example backend under the entry-point group,
    as `pip install ./examples/vendor_backend` would write it."""
    di = site / "stablehlo_ref_example_backend-0.1.0.dist-info"
    di.mkdir(parents=True)
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: stablehlo-ref-example-backend\nVersion: 0.1.0\n")
    (di / "entry_points.txt").write_text("[stablehlo_ref.backends]\nexample-cli = example_cli_backend:CommandLineBackend\n")
    shutil.copy(EXAMPLE / "example_cli_backend.py", site / "example_cli_backend.py")


@pytest.mark.slow
def test_entry_point_plugin_and_clean_backend_list(tmp_path):
    site = tmp_path / "site"
    _write_plugin_dist(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "conform", "--list-backends"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "reference: available (stablehlo_ref's numpy interpreter)" in lines
    assert any(l.startswith("example-cli: available (python") for l in lines), lines
    for l in lines:
        name, _, rest = l.partition(": ")
        assert rest.startswith(("available", "unavailable: ")), l
        assert not rest.startswith(f"available: {name}"), l      # no "xla: available: xla: cpu: cpu"
    # the example backend runs the cases (through `stablehlo-ref run` as its "compiler")
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "ops.mlir").write_text(PROGRAMS)
    r = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "conform", "--backend", "example-cli",
                        "--corpus", str(corpus), "--pattern", "*si32", "--json", str(tmp_path / "r.json")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["backend"] == "example-cli" and doc["summary"]["pass"] == 2


@pytest.mark.slow
def test_pytest_plugin_from_entry_point_skips_unsupported(tmp_path):
    """pytest finds the plugin through its pytest11 entry point (no -p), and a case the
    backend does not support is skipped, not failed (conformance.suite is imported from the
    source tree under another name than the installed package)."""
    (tmp_path / "vendor_dev.py").write_text(
        "from stablehlo_ref.conformance import BackendUnsupported, ReferenceBackend\n"
        "class Dev(ReferenceBackend):\n    name = 'dev'\n"
        "    def run(self, program, inputs, timeout=None):\n"
        "        if 'multiply' in program:\n            raise BackendUnsupported('no multiply here')\n"
        "        return super().run(program, inputs, timeout)\n")
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "ops.mlir").write_text(PROGRAMS)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "--pyargs",
                        "stablehlo_ref.conformance.suite", "--stablehlo-backend", "vendor_dev:Dev",
                        "--stablehlo-corpus", str(corpus), "-k", "si32"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 1 skipped" in r.stdout and "no multiply here" in r.stdout


def test_conform_outputs_and_export_skip_count(tmp_path, capsys):
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "ops.mlir").write_text(PROGRAMS)
    (corpus / "bad.mlir").write_text("func.func @broken() {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n"
                                     "  %1 = stablehlo.nosuch %0 : tensor<i32>\n"
                                     "  check.expect_eq_const %1, dense<1> : tensor<i32>\n  func.return\n}\n")
    out = {k: tmp_path / f"r.{k}" for k in ("json", "html", "xml", "profile")}
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--json", str(out["json"]),
                   "--html", str(out["html"]), "--junit", str(out["xml"]), "--profile", str(out["profile"])])
    assert rc == 0
    doc = json.loads(out["json"].read_text())
    validate_json(doc)
    assert doc["summary"]["pass"] == 6 and doc["summary"]["skipped"] == 1
    assert "<table class=\"matrix\"" in out["html"].read_text()
    _check_junit_schema(ET.fromstring(out["xml"].read_bytes()))
    assert json.loads(out["profile"].read_text())["schema"] == "stablehlo-ref/capability-profile/1"
    mask = os.umask(0)
    os.umask(mask)
    assert all((p.stat().st_mode & 0o777) == 0o666 & ~mask for p in out.values())    # not private
    capsys.readouterr()
    # --export with --pattern counts only the selected functions that could not be read
    rc = cli_main(["conform", "--export", str(tmp_path / "ex"), "--corpus", str(corpus), "--pattern", "*ops.mlir*"])
    assert rc == 0 and "(0 function(s) skipped)" in capsys.readouterr().out
    rc = cli_main(["conform", "--export", str(tmp_path / "ex2"), "--corpus", str(corpus)])
    assert rc == 0 and "(1 function(s) skipped)" in capsys.readouterr().out


def test_shards_are_disjoint_and_merge_back(tmp_path, capsys):
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x", "1/0", "1-2"):
        with pytest.raises(UsageError):
            parse_shard(bad)
    assert shard(list(range(7)), 1, 3) == [0, 3, 6] and shard(list(range(7)), 3, 3) == [2, 5]
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "ops.mlir").write_text(PROGRAMS)
    parts = []
    for i in (1, 2):
        p = tmp_path / f"s{i}.json"
        assert cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--shard", f"{i}/2",
                         "--json", str(p)]) == 0
        parts.append(p)
    ids = [{c["id"] for c in json.loads(p.read_text())["cases"]} for p in parts]
    assert len(ids[0]) == 3 and len(ids[1]) == 3 and not ids[0] & ids[1]
    merged = tmp_path / "merged.json"
    assert cli_main(["conform", "--merge", str(parts[0]), "--merge", str(parts[1]), "--json", str(merged),
                     "--html", str(tmp_path / "m.html")]) == 0
    doc = json.loads(merged.read_text())
    validate_json(doc)
    assert {c["id"] for c in doc["cases"]} == ids[0] | ids[1] and doc["summary"]["pass"] == 6
    capsys.readouterr()
    (tmp_path / "junk.json").write_text('{"cases": 1}')
    assert cli_main(["conform", "--merge", str(tmp_path / "junk.json")]) == 2
    assert "not a conformance report" in capsys.readouterr().err


def test_gpu_backends_say_what_is_missing():
    from stablehlo_ref.conformance import get_backend
    from stablehlo_ref.conformance.backends import XlaBackend, _has_module
    b = get_backend("xla:cuda")
    assert b.name == "xla:cuda"
    if not (_has_module("jax") and _has_module("jaxlib")):
        ok, why = b.available()
        assert not ok and "jax" in why
    elif not any(_has_module(m) for m in XlaBackend.GPU_PLUGINS["cuda"]):
        ok, why = b.available()
        assert not ok and "CUDA plugin" in why and "jax[cuda" in why
    assert get_backend("iree:cuda").name == "iree:cuda"


# ------------------------------------------------------------------------ campaigns

@pytest.mark.slow
def test_dask_campaign_two_configurations_merged(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (campaign extra) not installed")
    # the worker processes import the second configuration's backend from this folder
    here = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    cases = [c for c in _cases() if "sine" not in c.id and "exponential" not in c.id]
    configs = ["reference", "test_conformance_reports:FlushingBackend"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, protocol="tcp") as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        seen = []
        reports = run_campaign(configs, cases, scheduler=cluster.scheduler_address, chunk_size=1,
                               progress=lambda config, o: seen.append((config, o.id)),
                               known={configs[1]: {"mine/ops.mlir#1@add_op_test_f32": "fail: flushes subnormals"}})
        # the same from the command line: --backend twice, --scheduler, a list for one backend
        corpus = tmp_path / "mine"
        corpus.mkdir()
        (corpus / "ops.mlir").write_text(PROGRAMS)
        (tmp_path / "known.txt").write_text("mine/ops.mlir#1@add_op_test_f32\tfail: flushes subnormals\n"
                                            "mine/ops.mlir#2@floor_op_test_f32\tfail: flushes subnormals\n")
        rc = cli_main(["conform", "--backend", configs[0], "--backend", configs[1], "--corpus", str(corpus),
                       "--pattern", "*#[0124]@*", "--scheduler", cluster.scheduler_address,
                       "--known-failures", f"{configs[1]}={tmp_path / 'known.txt'}", "--json", str(tmp_path / "cli.json")])
        cli_doc = json.loads((tmp_path / "cli.json").read_text())
        assert rc == 0 and cli_doc["ok"] and [len(r["cases"]) for r in cli_doc["runs"]] == [4, 4], cli_doc["runs"][1]["cases"]
    assert [r.backend for r in reports] == ["reference", "flushing"]
    assert sorted(seen) == sorted((c, case.id) for c in configs for case in cases)
    for r in reports:
        assert [o.id for o in r.outcomes] == [c.id for c in cases]      # case order kept
    assert all(o.status == "pass" for o in reports[0].outcomes) and reports[0].ok
    fl = {o.id.split("@")[1]: o.status for o in reports[1].outcomes}
    assert fl == {"add_op_test_si32": "pass", "add_op_test_f32": "fail", "floor_op_test_f32": "fail",
                  "multiply_op_test_si32": "pass"}
    assert [o.id for o in reports[1].regressions()] == ["mine/ops.mlir#2@floor_op_test_f32"]
    # one report for both: campaign JSON (schema-checked), one HTML with a matrix per
    # configuration, one JUnit document with a testsuite per configuration
    from stablehlo_ref.conformance.campaign import write_outputs
    write_outputs(reports, json_path=str(tmp_path / "c.json"), html_path=str(tmp_path / "c.html"),
                  junit_path=str(tmp_path / "c.xml"))
    doc = json.loads((tmp_path / "c.json").read_text())
    validate_json(doc)
    assert doc["schema"] == "stablehlo-ref/conformance-campaign/1" and len(doc["runs"]) == 2 and not doc["ok"]
    assert [r["summary"]["unexpected_failures"] for r in doc["runs"]] == [0, 1]
    assert [r.backend for r in reports_from_json(doc)] == ["reference", "flushing"]
    assert (tmp_path / "c.html").read_text().count('<table class="matrix"') == 2
    root = ET.fromstring((tmp_path / "c.xml").read_bytes())
    _check_junit_schema(root)
    assert [s.get("name") for s in root] == ["stablehlo-conformance.reference", "stablehlo-conformance.flushing"]
    assert merge_reports(reports) == reports
    with pytest.raises(UsageError, match="one backend"):
        write_outputs(reports, profile_path=str(tmp_path / "p.json"))


def test_campaign_without_scheduler_and_bad_scheduler(tmp_path, capsys):
    cases = [c for c in _cases() if "si32" in c.id]
    reps = run_campaign(["reference"], cases)
    assert len(reps) == 1 and reps[0].counts()["pass"] == 2
    with pytest.raises(UsageError, match="unknown backend"):
        run_campaign(["nosuch"], cases)


# ------------------------------------------------- a profile from a real XLA CPU run

HAVE_JAX = all(__import__("importlib").util.find_spec(m) is not None for m in ("jax", "jaxlib"))
SHARED = REPO.parent / "shared" / "stablehlo-tests"


@pytest.mark.skipif(not HAVE_JAX, reason="jax not installed")
@pytest.mark.skipif(not (SHARED / "interpret").is_dir(), reason="../shared/stablehlo-tests not present")
def test_xla_cpu_profile_names_what_xla_gets_wrong(tmp_path, capsys):
    """The acceptance check: a profile from XLA CPU on upstream's add/floor/ceil programs, then
    `validate --profile` on models. The i1 add (XLA computes xor) fails on any host; whether
    subnormal floor/ceil fail depends on the host's flush-to-zero, so those are checked
    against what this run found rather than assumed."""
    prof = tmp_path / "xla.profile.json"
    rc = cli_main(["conform", "--backend", "xla", "--corpus", str(SHARED / "interpret"),
                   "--pattern", "interpret/[acf][del][dio]*.mlir#*", "--profile", str(prof),
                   "--known-failures", str(REPO / "tests" / "known_failures" / "conformance_xla.txt")])
    assert rc == 0, capsys.readouterr().out[-3000:]
    doc = json.loads(prof.read_text())
    entries = {(e["op"], e["element_type"]): e for e in doc["entries"]}
    assert entries[("stablehlo.add", "i1")]["status"] == "fail"
    assert entries[("stablehlo.add", "f32")]["status"] == "pass"
    assert {"stablehlo.add", "stablehlo.floor", "stablehlo.ceil"} <= {op for op, _ in entries}
    capsys.readouterr()
    models = {
        "bool_add.mlir": "func.func @main(%a: tensor<4xi1>) -> tensor<4xi1> {\n"
                         "  %0 = stablehlo.add %a, %a : tensor<4xi1>\n  return %0 : tensor<4xi1>\n}\n",
        "floor.mlir": MODEL_FLOOR,
        "add.mlir": MODEL_ADD,
    }
    for name, text in models.items():
        (tmp_path / name).write_text(text)
    rc = cli_main(["validate", "--profile", str(prof), str(tmp_path / "bool_add.mlir")])
    out = capsys.readouterr().out
    assert rc == 1 and "stablehlo.add i1" in out and "xor" in out
    rc = cli_main(["validate", "--profile", str(prof), str(tmp_path / "add.mlir")])
    out = capsys.readouterr().out
    assert rc == 0 and "all supported" in out
    floor_bad = entries[("stablehlo.floor", "f32")]["status"] != "pass"
    rc = cli_main(["validate", "--profile", str(prof), str(tmp_path / "floor.mlir")])
    out = capsys.readouterr().out
    assert rc == int(floor_bad) and (("stablehlo.floor f32" in out) == floor_bad)
    if floor_bad:
        assert "subnormal" in out


def test_a_backend_bug_is_that_cases_error():
    class Buggy(ReferenceBackend):
        name = "buggy"

        def run(self, program, inputs, timeout=None):
            if "multiply" in program:
                raise ZeroDivisionError("division by zero")
            return super().run(program, inputs, timeout)
    rep = run_suite(Buggy(), [c for c in _cases() if "si32" in c.id])
    st = {o.id.split("@")[1]: (o.status, o.stage, o.message) for o in rep.outcomes}
    assert st["add_op_test_si32"][0] == "pass"
    assert st["multiply_op_test_si32"] == ("error", "crash", "backend raised ZeroDivisionError: division by zero")
