"""The counters rules of a rubric, for grading/counters.py: their metrics and words, read and
checked from lessons/NN_name/rubric.json."""
import re

from . import static_evidence


# ---------------------------------------------------------------- metrics and their words

LABELS = {
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"):
        "global-load sectors per request",
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"):
        "global-store sectors per request",
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__inst_executed_op_shared_ld.sum"):
        "shared-load wavefronts per instruction",
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__inst_executed_op_shared_st.sum"):
        "shared-store wavefronts per instruction",
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "smsp__inst_executed_op_shared_ld.sum"):
        "shared-load bank conflicts per instruction",
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed_op_shared_st.sum"):
        "shared-store bank conflicts per instruction",
}
_OPS = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
        "==": lambda a, b: a == b}
_METRIC_NAME = re.compile(r"^[a-z0-9_]+__[a-z0-9_]+(\.[a-z0-9_]+)*$")
DEFAULT_TIMEOUT = 300   # seconds per ncu run (one per test case the rubric names)
LAUNCH_CAP = 400        # profiled launches per ncu run at most: bounds the time on a big test case


class CountersError(Exception):
    """Bad input: a message for the user, exit 2."""


def pattern_name(pattern):
    """A rule's kernel pattern as a name to show: "^void transpose_tiled<PaddedTile<32> ?>" -> "void transpose_tiled<PaddedTile<32>>"."""
    return re.sub(r"\\(.)", r"\1", pattern.lstrip("^").replace(" ?", "")).rstrip("(")


def label(rule):
    return rule.get("label") or LABELS.get((rule["metric"], rule.get("per"))) or (
        rule["metric"] + (" / " + rule["per"] if rule.get("per") else ""))


# ---------------------------------------------------------------- rubric

def load_rules(path):
    """The rubric (dict) and its "counters" rules, checked. A rubric without "counters" has none."""
    rubric = static_evidence.read_rubric_json(path, CountersError)
    rules = rubric.get("counters", [])
    if not isinstance(rules, list):
        raise CountersError(f"{path}: \"counters\" must be a list of rules")
    for i, rule in enumerate(rules):
        where = f"{path}: counters rule {i + 1}"
        for key in ("exercise", "kernel", "launch", "test_case", "metric", "op", "value", "short"):
            if key not in rule:
                raise CountersError(f"{where} has no \"{key}\"")
        if rule["op"] not in _OPS:
            raise CountersError(f"{where}: op {rule['op']!r} is not one of {' '.join(_OPS)}")
        for key in ("metric", "per"):
            if rule.get(key) is not None and not _METRIC_NAME.match(rule[key]):
                raise CountersError(f"{where}: {key} {rule[key]!r} is not an ncu metric name")
        for key in ("kernel", "launch"):
            try:
                re.compile(rule[key])
            except re.error as e:
                raise CountersError(f"{where}: {key} pattern {rule[key]!r}: {e}") from e
        fb = rule.get("fallback")
        if fb is not None and fb != "static" and not (isinstance(fb, dict) and "model" in fb and "mentions" in fb):
            raise CountersError(f"{where}: fallback must be \"static\" or {{\"model\": [test cases], \"mentions\": ...}}")
    return rubric, rules


def doctest_filter(name):
    """doctest splits --test-case on commas and matches * and ?: a name with commas becomes a pattern."""
    return re.sub(r"[,?]", "*", name)
