"""The C++ that grading/ub_lint.py gives GCC: MAIN.CU's device code rendered as host C++ (render),
after SHIM, ub_lint's header that stands in for CUDA's built-ins. See ub_lint.py for why and how."""
import os
import re

if __package__:
    from .regions import spans as regions
else:  # imported by ub_lint.py run as a file (the grader's sandbox): its folder is sys.path[0]
    from regions import spans as regions  # type: ignore[import-not-found,no-redef]

KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if
inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq __global__ __device__ __host__ __shared__ __constant__ __managed__ __forceinline__
__noinline__ __restrict__ __launch_bounds__ __align__ __attribute__ __grid_constant__ std size_t""".split())
_IDENT = re.compile(r"[A-Za-z_]\w*")
# Attributes and specifiers whose parentheses are not a function's parameters.
_ATTRIBUTE = re.compile(r"\b(__launch_bounds__|__align__|alignas|__attribute__|__declspec|decltype|noexcept)\s*\(")


class NotApplicable(Exception):
    """The source cannot be rendered as host C++ by this lint."""


def mask(text):
    """TEXT with comments and the insides of string and character literals replaced by spaces
    (newlines kept): the same length, so positions and line numbers carry over."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            blank(i + 1, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_") and \
                    re.match(r".*\b\d[\w']*$", text[max(0, i - 40):i]):
                i += 1  # a digit separator (1'000), not a character literal
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _blank_attributes(m):
    """M (masked text) with attribute-like parentheses blanked: __launch_bounds__(...) and the like."""
    out = list(m)
    for a in _ATTRIBUTE.finditer(m):
        depth, k = 0, a.end() - 1
        while k < len(m):
            if m[k] == "(":
                depth += 1
            elif m[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        for j in range(a.start(), min(k + 1, len(m))):
            if out[j] != "\n":
                out[j] = " "
    s = "".join(out)
    return re.sub(r"\[\[.*?\]\]", lambda x: " " * len(x.group(0)), s, flags=re.S)


def _template_header_end(m, i):
    """If M at I starts `template <...>`, the index after its `>`; else I."""
    t = re.match(r"template\s*<", m[i:])
    if not t:
        return i
    depth, k = 0, i + t.end() - 1
    while k < len(m):
        if m[k] in "<([":
            depth += 1
        elif m[k] in ">)]":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return len(m)


class Chunk:
    """One top-level declaration: text[start:end] of a file (masked copy m), its names, the names it uses."""

    def __init__(self, path, text, m, start, end, ns):
        self.path, self.start, self.end, self.ns = path, start, end, ns
        self.text = text[start:end]
        self.m = m[start:end]
        self.line = text.count("\n", 0, start) + 1
        self.last_line = self.line + self.text.count("\n")
        self.preprocessor = self.m.lstrip().startswith("#")
        self.names = set() if self.preprocessor else defined_names(self.m)
        self.uses = set(_IDENT.findall(self.m)) - KEYWORDS


def defined_names(m):
    """The names a top-level declaration (masked text M) defines: a function's, a type's, each
    declared variable's."""
    s = _blank_attributes(m).strip()
    k = 0
    while True:  # template <...> headers, any number of them
        e = _template_header_end(s, k)
        if e == k:
            break
        k = e
        while k < len(s) and s[k].isspace():
            k += 1
    s = s[k:]
    t = re.match(r"(?:(?:typedef|extern|static|inline|constexpr)\s+)*(struct|class|union|enum(?:\s+(?:class|struct))?)\s+(\w+)", s)
    if t:
        return {t.group(2)}
    if s.startswith("namespace"):
        return set()
    if s.startswith("typedef"):
        ids = [i for i in _IDENT.findall(s) if i not in KEYWORDS]
        return {ids[-1]} if ids else set()
    # Each declarator's name: the last identifier before its `=`, `[`, `(`, `{`, `,` or `;` at the
    # top level; an initializer (after `=`, up to the next `,` or `;`) names nothing.
    names, depth, declarator, init = set(), 0, [], False
    for tok in re.finditer(r"[A-Za-z_]\w*|::|[^\sA-Za-z_]", s):
        v = tok.group(0)
        if depth == 0 and v in ("=", "[", "{", "(", ";", ","):
            ids = [i for i in declarator if i not in KEYWORDS]
            if not init and ids and declarator[-1] == ids[-1]:
                names.add(ids[-1])
            declarator = []
            init = v == "=" or (init and v not in (",", ";"))
        if v in ("(", "[", "{"):
            depth += 1
        elif v in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and v != "::" and not init:
            declarator.append(v)
    return names


def chunks_of(path, text):
    """The top-level declarations of TEXT, in order: preprocessor lines are chunks of their own;
    a namespace's declarations are chunks inside it."""
    return _chunks(path, text, mask(text), 0, len(text), ())


def _directive_end(m, i, n):
    """The end of the preprocessor line at I of M (before N), with its continuations."""
    while i < n:
        j = m.find("\n", i, n)
        j = n if j < 0 else j
        if j > i and m[j - 1] == "\\" and j < n:
            i = j + 1
            continue
        return j
    return i


def _chunks(path, text, m, i, n, ns):
    out = []
    while i < n:
        while i < n and m[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        if m[i] == "#":  # a preprocessor line, with its continuations
            i = _directive_end(m, i, n)
            out.append(Chunk(path, text, m, start, i, ns))
            continue
        nsm = re.match(r"(inline\s+)?namespace\s*([\w:]*)\s*\{", m[i:i + 300])
        if nsm:  # descend: the namespace's own declarations, each a chunk inside it
            body = i + nsm.end()
            depth, k = 1, body
            while k < n and depth:
                if m[k] == "{":
                    depth += 1
                elif m[k] == "}":
                    depth -= 1
                k += 1
            if depth:
                raise NotApplicable("unbalanced braces at line %d" % (text.count("\n", 0, i) + 1))
            out += _chunks(path, text, m, body, k - 1, ns + ((nsm.group(1) or "") + "namespace " + nsm.group(2),))
            i = k
            continue
        depth, head_eq = 0, False
        j = _template_header_end(m, i)
        while j < n:
            c = m[j]
            if c == "#" and depth > 0 and m[m.rfind("\n", 0, j) + 1:j].strip() == "":
                e = m.find("\n", j, n)  # a preprocessor line inside a declaration: part of it
                j = n if e < 0 else e
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    raise NotApplicable("unbalanced brackets at line %d" % (text.count("\n", 0, j) + 1))
                if depth == 0 and c == "}" and not head_eq and not m[j + 1:j + 200].lstrip().startswith((";", ",")):
                    j += 1
                    break
            elif depth == 0 and c == "=":
                head_eq = True
            elif depth == 0 and c == ";":
                j += 1
                break
            j += 1
        if depth > 0:
            raise NotApplicable("unbalanced brackets from line %d" % (text.count("\n", 0, start) + 1))
        out.append(Chunk(path, text, m, start, j, ns))
        i = j
    return out


def local_includes(text):
    return re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, flags=re.M)


def headers(main_text, common):
    """[(path, text)] of the course's headers MAIN.CU includes from COMMON, each once, included ones first."""
    out, seen = [], set()

    def visit(name):
        path = os.path.join(common, os.path.basename(name))
        if path in seen or not os.path.isfile(path):
            return
        seen.add(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in local_includes(text):
            visit(inc)
        out.append((path, text))
    for inc in local_includes(main_text):
        visit(inc)
    return out


def _clean(text):
    """A chunk's text as GCC gets it: #include and #pragma lines blanked (line count kept), and
    `extern __shared__` (dynamic shared memory) an extern array."""
    text = re.sub(r"^[ \t]*#[ \t]*(include|pragma|line|error|warning)\b.*$", "", text, flags=re.M)
    text = re.sub(r"\b_Pragma\s*\(", "(void)(", text)
    return re.sub(r"\bextern\s+__shared__\b", "extern", text)


_TEMPLATE_ID = r"\b%s\s*<((?:[^<>;{}]|<[^<>;{}]*>)*)>"  # name<ARGS>, ARGS with one level of <> inside


def _closure(seeds, by_name, chosen):
    """Adds to CHOSEN (ids) the chunks SEEDS name, transitively."""
    todo = list(seeds)
    while todo:
        c = todo.pop()
        if id(c) in chosen:
            continue
        chosen.add(id(c))
        for name in c.uses:
            todo += [d for d in by_name.get(name, []) if id(d) not in chosen]


def _header_chunks(main_text, common):
    """The declarations of the course's headers MAIN.CU includes (from COMMON)."""
    pool = []
    for path, text in headers(main_text, common):
        try:
            pool += [c for c in chunks_of(path, text) if not c.preprocessor]
        except NotApplicable:
            continue  # (the course's own headers always parse; a change that breaks one must not fail a student)
    return pool


def _emit(pool, chosen, uses, shim):
    """The C++ for GCC: SHIM, the chosen declarations (and main.cu's conditionals and macros),
    each at its own #line, then one use of each template kernel's instantiation."""
    parts = [shim]
    for c in pool:
        if id(c) in chosen or (c.preprocessor and c.path == "main.cu" and
                               re.match(r"\s*#\s*(define|undef|if|ifdef|ifndef|elif|else|endif)\b", c.m)):
            opened = "".join("%s { " % ns for ns in c.ns)
            parts.append('#line %d "%s"\n%s%s%s\n' % (c.line, c.path, opened, _clean(c.text), " }" * len(c.ns)))
    for k, (name, args, c, _) in enumerate(uses):
        q = "::".join(ns.split()[-1] for ns in c.ns)
        full = (q + "::" if q else "") + name
        parts.append("decltype(&%s<%s>) ub_lint_use_%d = &%s<%s>;\n" % (full, args, k, full, args))
    return "".join(parts)


def render(main_text, common, fallback=True, shim=""):
    """The host C++ for GCC: the shim, then MAIN.CU's device code (every declaration that is
    __global__ or __device__ or holds an EXERCISE region) and every declaration it names, each at
    its own line of its own file (#line), then an instantiation of each template kernel.

    A template kernel is instantiated with the arguments MAIN.CU gives it (`name<kTile + 1>`,
    constants of the file only). One launched only from a template launcher (`kernel<T><<<...>>>`)
    gets, with FALLBACK, the arguments the file gives any template that fit its one parameter: the
    constants (launch_tiled<16>) for an int, the class templates' uses (launch<PaddedTile<32>>) for
    a class the kernel reads members of (Layout::at)."""
    spans = regions(main_text)
    main_chunks = chunks_of("main.cu", main_text)
    pool = _header_chunks(main_text, common) + main_chunks
    seeds = [c for c in main_chunks if not c.preprocessor and (re.search(r"\b__(global|device)__\b", c.m) or
                                                               any(c.line <= e and c.last_line >= b for b, e in spans))]
    if not seeds:
        raise NotApplicable("no device code in the file")
    by_name = {}
    for c in pool:
        for name in c.names:
            by_name.setdefault(name, []).append(c)
    chosen = set()
    _closure(seeds, by_name, chosen)

    masked = mask(main_text)
    class_templates = {n for c in pool for n in c.names
                       if re.match(r"template\s*<.*?>\s*(struct|class|union)\b", c.m.lstrip(), flags=re.S)}

    def constant(args):  # constants of the file and arithmetic: 16, kTile + 1
        return bool(re.fullmatch(r"[\w\s+\-*/%()]+", args)) and all(
            i not in KEYWORDS and by_name.get(i) for i in _IDENT.findall(args))

    def class_use(args):  # a class template of the file at constant arguments: PaddedTile<32>
        t = re.fullmatch(r"(\w+)\s*<([^<>]*)>", args)
        return bool(t) and t.group(1) in class_templates and constant(t.group(2))
    every = [a.group(1).strip() for a in re.finditer(_TEMPLATE_ID % r"\w+", masked)]
    uses = []  # (name, args, chunk, fallback)
    for c in seeds:
        head = re.match(r"template\s*<(.*?)>\s*(struct|class|union)?", c.m.lstrip(), flags=re.S)
        if not head or head.group(2) or not re.search(r"\b__global__\b", c.m):
            continue  # device functions are instantiated through the kernels that call them
        for name in c.names:
            direct = [a.group(1).strip() for a in re.finditer(_TEMPLATE_ID % re.escape(name), masked)]
            args = [(a, False) for a in direct if constant(a) or class_use(a)]
            param = re.fullmatch(r"\s*(int|unsigned|long|long long|std::size_t|size_t|class|typename)\s+(\w+)(\s*=[^,]*)?\s*",
                                 head.group(1))
            if not args and fallback and param:
                if param.group(1) in ("class", "typename"):
                    if re.search(r"\b%s\s*::" % param.group(2), c.m):
                        args = [(a, True) for a in every if class_use(a)]
                else:
                    args = [(a, True) for a in every if constant(a)]
            for a, fb in args:
                if all((name, re.sub(r"\s+", "", a)) != (u[0], re.sub(r"\s+", "", u[1])) for u in uses):
                    uses.append((name, a, c, fb))
                    _closure([d for i in _IDENT.findall(a) for d in by_name.get(i, [])], by_name, chosen)
    return _emit(pool, chosen, uses, shim), any(u[3] for u in uses)


# GCC 13 names a warning that takes a level with a trailing "=" ([-Warray-bounds=]), GCC 12 without.
