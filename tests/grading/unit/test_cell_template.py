"""The cells' configured template (grading/cell_template.py): what a cell's build folder takes from
it (CMakeCache.txt and CMakeFiles/<version>/*.cmake, the template's path rewritten, nothing else),
when a run uses one, and, with the real CMake of this machine, that a cell configured from it gets
the same compile and link commands as one configured from nothing, without detecting a compiler."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, REPO)
from grading import box as box_  # noqa: E402
from grading import cell_template, compile, grader, options, sandbox  # noqa: E402
from grading.course_build import Course  # noqa: E402


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


class Copy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.t = os.path.join(self.tmp, "cache", "entry", "cell-template", "box", "build")
        write(os.path.join(self.t, "CMakeCache.txt"),
              b"# For build in directory: %s\nCMAKE_CACHEFILE_DIR:INTERNAL=%s\nx_BINARY_DIR:STATIC=%s\n"
              b"CMAKE_FIND_PACKAGE_REDIRECTS_DIR:STATIC=%s/CMakeFiles/pkgRedirects\nCMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\n"
              % ((os.fsencode(self.t),) * 4))
        write(os.path.join(self.t, "CMakeFiles", "4.1.2", "CMakeCUDACompiler.cmake"), b'set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")\n')
        write(os.path.join(self.t, "CMakeFiles", "4.1.2", "CMakeSystem.cmake"), b"set(CMAKE_SYSTEM_NAME Linux)\n")
        # (what a cell must not take: the generated build, the detection's own work, targets' folders)
        write(os.path.join(self.t, "build.ninja"), b"build all: phony\n")
        write(os.path.join(self.t, "CMakeFiles", "4.1.2", "CompilerIdCUDA", "a.out"), b"\x7fELF")
        write(os.path.join(self.t, "CMakeFiles", "4.1.2", "CMakeDetermineCompilerABI_CUDA.bin"), b"\x7fELF")
        write(os.path.join(self.t, "CMakeFiles", "01_a_check.dir", "flags.cmake"), b"")
        self.cell = os.path.join(self.tmp, "out", "cells", "0007", "box", "build")
        os.makedirs(self.cell)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_a_cell_takes_the_cache_and_the_compilers_files_with_its_own_path(self):
        cell_template.copy_into(self.t, self.cell)
        got = sorted(os.path.relpath(os.path.join(r, n), self.cell) for r, _d, ns in os.walk(self.cell) for n in ns)
        self.assertEqual(got, ["CMakeCache.txt", "CMakeFiles/4.1.2/CMakeCUDACompiler.cmake", "CMakeFiles/4.1.2/CMakeSystem.cmake"])
        with open(os.path.join(self.cell, "CMakeCache.txt"), "rb") as f:
            cache = f.read()
        self.assertNotIn(os.fsencode(self.t), cache)
        self.assertIn(b"CMAKE_CACHEFILE_DIR:INTERNAL=%s\n" % os.fsencode(self.cell), cache)
        self.assertIn(b"x_BINARY_DIR:STATIC=%s\n" % os.fsencode(self.cell), cache)
        self.assertIn(b"CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\n", cache)

    def test_prepare_box_starts_the_build_folder_from_the_template(self):
        subs = os.path.join(self.tmp, "subs")
        write(os.path.join(subs, "ann", "01_a", "main.cu"), b"// ann's\n")
        cell = os.path.dirname(os.path.dirname(self.cell))
        shutil.rmtree(os.path.join(cell, "box"))
        box = compile.prepare_box(cell, subs, (b"ann", b"01_a", b"main.cu"), 1 << 20, template=self.t)
        self.assertTrue(os.path.isfile(os.path.join(box, "build", "CMakeFiles", "4.1.2", "CMakeSystem.cmake")))
        with open(os.path.join(box, "src", "main.cu"), "rb") as f:
            self.assertEqual(f.read(), b"// ann's\n")

    def test_a_run_uses_a_cached_template_only_once_it_was_made_whole(self):
        course = Course(config=[], work=os.path.join(self.tmp, "cache", "entry"), common="", log="", t0=0.0, cached=True)
        line = grader._template(None, course, "01_a")  # (a complete entry: nothing is made)
        self.assertEqual(course.template, "")
        self.assertIn("detected the compilers itself", line)
        with open(os.path.join(course.work, "cell-template", "ready"), "w") as f:
            f.write(self.t + "\n")
        line = grader._template(None, course, "01_a")
        self.assertEqual(course.template, self.t)
        self.assertIn("configured once in the sandbox", line)


def ninja_commands(build):
    """Every `build` statement of BUILD's build.ninja with its variables, the folder's path taken
    out, without CMake's own rerun rules (they list the files the configure read)."""
    with open(os.path.join(build, "build.ninja")) as f:
        text = f.read().replace(build, "<build>")
    blocks = [b for b in text.split("\n\n") if b.lstrip().startswith("build ") and "RERUN_CMAKE" not in b
              and "CMakeLists.txt" not in b.split("\n")[0]]
    return sorted(re.sub(r"\n\s*TARGET_(COMPILE_)?PDB = .*", "", b) for b in blocks)


@unittest.skipUnless(shutil.which("cmake") and shutil.which("nvcc"), "needs cmake and nvcc on PATH")
class RealCMake(unittest.TestCase):
    """This machine's CMake on the course: one template, then a cell of another lesson."""

    def test_a_cell_from_the_template_compiles_as_one_configured_from_nothing(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        prebuilt = os.path.join(tmp, "prebuilt")
        for lib in ("course_common", "course_harness", "course_harness_main"):
            write(os.path.join(prebuilt, "lib%s.a" % lib), b"")
        config = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CUDA_ARCHITECTURES=90"] + (["-G", "Ninja"] if shutil.which("ninja") else [])
        if not shutil.which("ninja"):
            self.skipTest("compares ninja's build files: needs ninja")
        plain = os.path.join(tmp, "plain")
        lesson, source = "04_reduction", os.path.join(REPO, "lessons", "04_reduction", "main.cu")
        with open(source, "rb") as f:
            code = f.read()
        write(os.path.join(plain, "src", "main.cu"), code)
        p = subprocess.run(["bash", "-c", cell_template.CONFIGURE, "x", REPO, plain, lesson, prebuilt] + config,
                           capture_output=True, text=True)
        if p.returncode != 0:
            self.skipTest("cmake cannot configure the course on this machine: %s" % p.stdout[-300:])
        o = options.Options(no_sandbox=True)
        box = box_.Box(o=o, cfg=sandbox.Config(no_sandbox=True), as_root=False, uid_base=0)
        course = Course(config=config, work=os.path.join(tmp, "work"), common="", log="", t0=0.0, view=REPO, prebuilt=prebuilt)
        template, why = cell_template.make(box, course, "01_naive_transpose")
        self.assertEqual(why, "")
        self.assertEqual(template, cell_template.ready(course))
        cell = os.path.join(tmp, "cell")
        os.makedirs(os.path.join(cell, "build"))
        cell_template.copy_into(template, os.path.join(cell, "build"))
        write(os.path.join(cell, "src", "main.cu"), code)
        q = subprocess.run(["bash", "-c", cell_template.CONFIGURE, "x", REPO, cell, lesson, prebuilt] + config,
                           capture_output=True, text=True)
        self.assertEqual(q.returncode, 0, q.stdout[-2000:] + q.stderr[-2000:])
        self.assertNotRegex(q.stdout, r"compiler identification|Detecting (CXX|CUDA) compiler ABI")
        self.assertRegex(p.stdout, r"The CUDA compiler identification")
        with open(os.path.join(cell, "build", "CMakeCache.txt")) as f:
            self.assertIn("COURSE_GRADE_LESSON:STRING=%s\n" % lesson, f.read())
        a = [c.replace(cell, "<cell>") for c in ninja_commands(os.path.join(cell, "build"))]
        b = [c.replace(plain, "<cell>") for c in ninja_commands(os.path.join(plain, "build"))]
        self.assertGreater(len(a), 10)
        self.assertEqual(a, b)


if __name__ == "__main__":
    unittest.main()
