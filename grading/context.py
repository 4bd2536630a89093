"""What every cell's steps share, made once before the first cell is compiled and only read while
cells are graded: the options, the seed, the course's build, the sandbox, the rubrics, the GPUs and
the progress lines."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .box import Box
from .cell_evidence import Rubrics
from .course_build import Course
from .options import Options
from .progress import Progress


@dataclass
class Grading:
    o: Options
    seed: int
    submissions: str
    course: Course
    box: Box
    rubrics: Rubrics
    gpus: list[tuple] = field(default_factory=list)  # [(index, uuid, minor)] with --gpus
    progress: Progress | None = None
    compile_done: threading.Event = field(default_factory=threading.Event)  # every build ended
    stop_reasons: dict[int, str] = field(default_factory=dict)  # worker -> why it took no more cells
