"""The course's idea figures: SVG drawings made from the lessons' own model code.

scripts/draw_figures.py writes them; each lesson has a module here, lessonNN.py, whose FIGURES
maps a file name (written to lessons/NN_name/figures/) to a function that returns the drawing.
Helpers: svg.py (a small SVG writer, so the output is byte-for-byte the same on every machine)
and models.py (lessons 01 and 06's sector and bank models, compiled natively from the very
`// SITE MODEL` lines the site's explorers run, and the lessons' constants).
"""
