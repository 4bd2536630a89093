// The two explorers' pages. Every number about a warp's access (addresses, sectors, banks,
// wavefronts, conflicts) comes from the lessons' C++ models compiled to WebAssembly
// (explorer_models.js, built from site/wasm/models.cpp); this file only reads the controls,
// calls those models and draws what they return. The H200 figures come from h200_measured.js,
// written from results/h200/ when the site was built.
"use strict";

const LANES = 32;
const measured = window.COURSE_MEASURED;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}
const byId = (id) => document.getElementById(id);
const fmt = (x, digits = 1) => Number(x).toFixed(digits);

/// Fills a <select> with "custom" and the model's named patterns.
function fillPatterns(select, count, name) {
  select.append(el("option", { value: "custom" }, "custom: the element size, stride and offset below"));
  for (let i = 0; i < count; ++i) select.append(el("option", { value: String(i) }, name(i)));
}

/// Wires the controls: choosing a named pattern runs it; editing a number switches to custom.
function wire(prefix, runPattern, runCustom) {
  const select = byId(prefix + "-pattern");
  const inputs = ["elem", "stride", "offset"].map((k) => byId(prefix + "-" + k));
  const update = () => {
    for (const input of inputs) input.parentElement.classList.toggle("explorer-custom-off", select.value !== "custom");
    return select.value === "custom" ? runCustom() : runPattern(Number(select.value));
  };
  select.addEventListener("change", update);
  for (const input of inputs)
    input.addEventListener("input", () => {
      select.value = "custom";
      update();
    });
  update();
}

function measuredRow(cells, highlight) {
  const tr = el("tr", highlight ? { class: "explorer-current" } : {});
  for (const c of cells) tr.append(el("td", {}, c));
  return tr;
}

// ================================================================ lesson 01: sectors
function sectorExplorer(m) {
  const str = (p) => m.UTF8ToString(p);
  const select = byId("sector-pattern");
  fillPatterns(select, m._sector_pattern_count(), (i) => str(m._sector_pattern_name(i)));

  const show = (rc, fromPattern) => {
    byId("sector-error").textContent = rc < 0 ? str(m._sector_error()) : "";
    const out = byId("sector-result");
    out.hidden = rc < 0;
    if (rc < 0) return;
    const match = fromPattern >= 0 ? fromPattern : m._sector_matching_pattern();
    const elem = m._sector_elem_bytes();
    byId("sector-elem").value = String(elem);
    byId("sector-count").textContent = String(m._sector_count());
    byId("sector-efficiency").textContent = fmt(100 * m._sector_efficiency()) + "%";
    byId("sector-bytes").textContent = `${m._sector_distinct_bytes()} bytes asked for, ${32 * m._sector_count()} bytes moved`;

    // The sectors, each with the lanes whose bytes fall in it (a lane may straddle two).
    const strip = byId("sector-strip");
    strip.replaceChildren();
    for (let i = 0; i < m._sector_list_size(); ++i) {
      const s = m._sector_list_at(i), lanes = [];
      for (let lane = 0; lane < LANES; ++lane)
        if (m._sector_lane_first(lane) <= s && s <= m._sector_lane_last(lane)) lanes.push(lane);
      const span = lanes.length > 2 && lanes[lanes.length - 1] - lanes[0] === lanes.length - 1
        ? `lanes ${lanes[0]}–${lanes[lanes.length - 1]}` : `lane${lanes.length > 1 ? "s" : ""} ${lanes.join(", ")}`;
      strip.append(el("span", { class: "sector-box" }, el("b", {}, `sector ${s}`), span));
    }
    byId("sector-list").textContent = `${elem}-byte elements, ${m._sector_list_size()} sectors:`;
    const grid = byId("sector-lanes");
    grid.replaceChildren();
    for (let lane = 0; lane < LANES; ++lane) {
      const first = m._sector_lane_first(lane), last = m._sector_lane_last(lane);
      grid.append(el("span", {}, `${String(lane).padStart(2)}: byte ${m._sector_lane_address(lane)} → sector ` +
                                 (first === last ? `${first}` : `${first}–${last}`)));
    }

    // The H200 side: lesson 01's kernels as measured, the one whose access this is marked.
    const kernel = match >= 0 ? str(m._sector_pattern_kernel(match)) : "";
    const table = byId("sector-measured");
    table.replaceChildren(el("tr", {}, el("th", {}, "lesson 01 kernel"), el("th", {}, "GB/s"), el("th", {}, "% of cudaMemcpy")));
    for (const [name, r] of Object.entries(measured.lesson01))
      table.append(measuredRow([name, r.rate_text, r.percent_text], name === kernel));
    byId("sector-measured-note").textContent = kernel
      ? `This pattern is a warp of ${kernel} (marked below).`
      : "This pattern is none of lesson 01's kernels; their measurements are below for comparison.";
  };
  wire("sector",
       (i) => show(m._sector_set_pattern(i), i),
       () => show(m._sector_set_strided(Number(byId("sector-elem").value), Number(byId("sector-stride").value),
                                        Number(byId("sector-offset").value)), -1));
}

// ================================================================ lesson 06: banks
// Which of lesson 06's timed transposes each tile probe is a warp of (names as in results.csv).
const TRANSPOSE_OF_PROBE = {
  tile32x32_column: "tiled 32x32 unpadded",
  tile32x33_column: "tiled 32x33 padded",
  tile32x32_xor_column: "tiled 32x32 xor-swizzled",
  tile16x16_column: "tiled 16x16 unpadded, 16x16 thr",
  tile16x17_column: "tiled 16x17 padded, 16x16 thr",
  tile64x65_vec4_fill: "64x65 padded, float4, 8x16 thr",
  tile64x65_vec4_gather: "64x65 padded, float4, 8x16 thr",
  tile64_xor_vec4_fill: "64x64 xor-swizzled, float4, 8x16 thr",
  tile64_xor_vec4_gather: "64x64 xor-swizzled, float4, 8x16 thr",
};

function bankExplorer(m) {
  const str = (p) => m.UTF8ToString(p);
  const select = byId("bank-pattern");
  fillPatterns(select, m._bank_pattern_count(), (i) => `${str(m._bank_pattern_name(i))} (${m._bank_pattern_width(i)}-byte)`);

  const show = (rc, fromPattern) => {
    byId("bank-error").textContent = rc < 0 ? str(m._bank_error()) : "";
    byId("bank-result").hidden = rc < 0;
    if (rc < 0) return;
    const match = fromPattern >= 0 ? fromPattern : m._bank_matching_pattern();
    byId("bank-wavefronts").textContent = String(m._bank_wavefronts());
    byId("bank-conflicts").textContent = String(m._bank_conflicts());
    byId("bank-degree").textContent = m._bank_degree() === 1 ? "none (1-way)" : m._bank_degree() + "-way";
    byId("bank-elem").value = String(m._bank_width());
    byId("bank-units").textContent = ["", "the whole warp at once", "two half-warps, one after the other", "", "four quarter-warps, one after the other"][m._bank_units()];
    byId("bank-ideal").textContent = String(m._bank_ideal());

    // The lesson's own map: lanes down, banks across, each mark the wavefront serving that lane.
    const grid = byId("bank-map");
    const head = el("tr", {}, el("th", {}, "lane"), el("th", {}, "address"), el("th", {}, "bank"));
    for (let b = 0; b < 32; ++b) head.append(el("th", { class: "bank-col" }, String(b)));
    grid.replaceChildren(head);
    for (let lane = 0; lane < LANES; ++lane) {
      const row = str(m._bank_map_row(lane));
      const bank = m._bank_lane_bank(lane);
      const tr = el("tr", {}, el("td", {}, String(lane)), el("td", {}, String(m._bank_lane_address(lane))),
                    el("td", {}, bank < 0 ? "–" : String(bank)));
      for (const ch of row) {
        const pass = ch === "." ? -1 : parseInt(ch, 36);
        tr.append(el("td", pass < 0 ? { class: "bank-cell" }
                               : { class: "bank-cell bank-hit", style: `--pass:${pass}` }, ch === "." ? "" : ch));
      }
      grid.append(tr);
    }

    // The H200 side: what Nsight Compute counted for this exact access, and what it cost in time.
    const notes = byId("bank-measured");
    notes.replaceChildren();
    const name = match >= 0 ? str(m._bank_pattern_name(match)) : "";
    const probe = measured.probes[name];
    if (probe)
      notes.append(el("li", {}, `Nsight Compute counted ${probe.ncu_wavefronts} wavefront(s) and ${probe.ncu_conflicts} ` +
                                `bank conflict(s) for this access (probe ${name}), where the model says ` +
                                `${m._bank_wavefronts()} and ${m._bank_conflicts()}.`));
    const stride = /^w4_stride(\d+)$/.exec(name);
    if (stride && measured.strides[stride[1]])
      notes.append(el("li", {}, `Timed in a loop of such loads, s[lane * ${stride[1]}] took ` +
                                `${measured.strides[stride[1]].rate_text}× as long as stride 1.`));
    const transpose = TRANSPOSE_OF_PROBE[name];
    if (transpose && measured.lesson06[transpose])
      notes.append(el("li", {}, `It is a warp of the transpose "${transpose}", which ran at ` +
                                `${measured.lesson06[transpose].rate_text} GB/s, ` +
                                `${measured.lesson06[transpose].percent_text}% of cudaMemcpy.`));
    if (!notes.children.length)
      notes.append(el("li", {}, "This access is none of the patterns the lesson measured on the H200; " +
                                "pick a named pattern to see the model beside the GPU's counts."));
  };
  wire("bank",
       (i) => show(m._bank_set_pattern(i), i),
       () => show(m._bank_set_strided(Number(byId("bank-elem").value), Number(byId("bank-stride").value),
                                      Number(byId("bank-offset").value)), -1));
}

// ================================================================ start
ExplorerModels().then((m) => {
  const root = document.querySelector("[data-explorer]");
  byId("explorer-gpu").textContent = `${measured.gpu}, from ${measured.source}/`;
  if (root.dataset.explorer === "sectors") sectorExplorer(m);
  else bankExplorer(m);
  root.dataset.ready = "1";  // the browser test waits for this
});
