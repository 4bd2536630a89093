"""Nsight Compute (ncu), for grading/counters.py: its CSV output read into launches and per-kernel
sums, and, when it could not read the counters, why (its own words, quoted)."""
import csv
import os
import re
import signal
import subprocess

from . import static_evidence


# ---------------------------------------------------------------- ncu's CSV

_SI = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_COUNT_UNITS = ("sector", "inst", "request", "wavefront", "byte", "warp", "thread", "block", "cycle")


def parse_value(text, unit=""):
    """ncu's number: "8,388,608" -> 8388608.0; a count ncu scaled ("2.10 Msector") back to units."""
    text = (text or "").strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    if unit and unit[0] in _SI and unit[1:] in _COUNT_UNITS:
        v *= _SI[unit[0]]
    return v


def parse_csv(text):
    """ncu --csv output (the details page: one row per launch and metric) -> list of launches in
    profiling order, each {"id", "kernel", "cc", "metrics": {name: value}}.

    Only the CSV table is read: its header is the line that starts with "ID", its rows the lines
    after it that start with a quote (the program's own output and ncu's ==PROF== lines around it
    are skipped, never interpreted)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    header = next(csv.reader([lines[start]]))
    rows = [l for l in lines[start + 1:] if l.startswith('"')]
    launches = {}
    for fields in csv.reader(rows):
        if len(fields) != len(header):
            continue
        row = dict(zip(header, fields))
        if not (row.get("ID") or "").strip().isdigit() or "Metric Name" not in row:
            continue
        launch = launches.setdefault(int(row["ID"]), {
            "id": int(row["ID"]),
            "kernel": row.get("Kernel Name") or row.get("Function Name") or "?",
            "cc": row.get("CC"),
            "metrics": {},
        })
        launch["metrics"][row["Metric Name"]] = parse_value(row.get("Metric Value"), row.get("Metric Unit", ""))
    return [launches[i] for i in sorted(launches)]


def per_kernel(launches):
    """{demangled kernel name: {"launches": n, "metrics": {name: sum over its launches}}}."""
    kernels = {}
    for launch in launches:
        k = kernels.setdefault(launch["kernel"], {"launches": 0, "metrics": {}})
        k["launches"] += 1
        for name, v in launch["metrics"].items():
            if v is not None:
                k["metrics"][name] = k["metrics"].get(name, 0.0) + v
    return kernels


def arch_of(launches):
    """"sm_90" from ncu's CC column ("9.0"), or None."""
    for launch in launches:
        m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", launch.get("cc") or "")
        if m:
            return f"sm_{m.group(1)}{m.group(2)}"
    return None


# ---------------------------------------------------------------- why counters could not be read

def diagnose(output, rc, timed_out=False, timeout=None):
    """None when ncu profiled normally, else one line that says why the counters are missing."""
    if timed_out:
        return f"ncu ran past its time limit of {timeout} s and was stopped"
    if "ERR_NVGPUCTRPERM" in output:
        return ("this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM): the driver allows "
                "only root unless an administrator loads it with NVreg_RestrictProfilingPermission=0 "
                "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    if rc == 77 or "GPU test cases not run" in output:
        line = next((l.strip() for l in output.splitlines() if "not run" in l), "")
        return "no GPU: " + (line or "the check skipped its GPU test cases")
    if rc == 127 or rc == 126:
        return f"the check could not be started under ncu (exit {rc})"
    return None


def ncu_errors(output):
    return [l.strip() for l in output.splitlines() if l.startswith("==ERROR==")]


def find_ncu(explicit=None):
    return static_evidence.find_cuda_tool("ncu", "NCU", explicit)


def run_limited(cmd, timeout):
    """(rc, stdout + stderr, timed out?): the command in a process group of its own, all of it killed
    at the time limit (ncu starts the check as its child)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         text=True, errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return None, out or "", True
