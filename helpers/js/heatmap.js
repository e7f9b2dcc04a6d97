// A heatmap explorer drawn in the browser: tokens on both axes (queries are rows, keys are columns), the values
// in the cells of small matrices, a colour bar, the colours of matplotlib's colormaps (256-entry tables made by
// matplotlib and shipped in the data), fixed colour limits. One module, two hosts:
//   - JupyterLab, through anywidget: `render({model, el})`; each control's value is a traitlet of the Python
//     object, synced both ways, and a move redraws here at once from frames computed in Python beforehand;
//   - a page with no kernel (the course site, an nbconvert HTML export): `mount(el, data)`, called by the
//     inline <script type="module"> that helpers/explorer.py writes next to the data (JSON).
// Nothing is fetched: the data and this module travel inside the output. See helpers/explorer.py.

const SVG_NS = "http://www.w3.org/2000/svg";
const FONT = "DejaVu Sans, Noto Sans CJK SC, WenQuanYi Micro Hei, sans-serif";
const STYLE = `
.course-explorer { font-family: ${FONT}; color: #1a1a1a; background: #fff; padding: 6px; max-width: 100%; }
.course-explorer .cx-controls { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: center;
  margin-bottom: 4px; }
.course-explorer .cx-control { display: flex; gap: 6px; align-items: center; }
.course-explorer label { font-size: 14px; color: #1a1a1a; }
.course-explorer select, .course-explorer input { font-size: 14px; color: #1a1a1a; background: #fff; }
.course-explorer select:focus-visible, .course-explorer input:focus-visible { outline: 3px solid #005fcc;
  outline-offset: 2px; }
.course-explorer svg { display: block; max-width: 100%; height: auto; }
.course-explorer .cx-readout { font-family: monospace; font-size: 13px; min-height: 1.4em; color: #1a1a1a; }
.course-explorer .cx-hidden { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
`;
let counter = 0;

function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function html(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

// The width of a label in pixels, roughly (no layout is asked of the browser): CJK characters are square.
function textWidth(text, size) {
  let width = 0;
  for (const ch of String(text)) width += ch.codePointAt(0) >= 0x2e80 ? size : size * 0.6;
  return width;
}

// matplotlib's Colormap.__call__ after Normalize(vmin, vmax): index = floor(x * N), clipped to [0, N - 1].
export function colour(table, vmin, vmax, value) {
  if (value === null || value === undefined) return "#ffffff"; // a blank cell (NaN in Python)
  const n = table.length;
  const x = (value - vmin) / (vmax - vmin);
  if (Number.isNaN(x)) return "#ffffff";
  return table[Math.min(n - 1, Math.max(0, Math.floor(x * n)))];
}

// Tick positions as matplotlib's MaxNLocator would roughly choose them: steps of 1, 2, 2.5 or 5 times 10^k.
function ticks(vmin, vmax) {
  const span = vmax - vmin;
  if (!(span > 0)) return [vmin];
  const raw = span / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw * 0.999);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (step / power === 2.5 ? 1 : 0));
  const out = [];
  for (let t = Math.ceil(vmin / step - 1e-9) * step; t <= vmax + step * 1e-9; t += step) {
    out.push([t, (Math.abs(t) < step * 1e-9 ? 0 : t).toFixed(Math.max(1, decimals))]);
  }
  return out;
}

function frameKey(indices) {
  return indices.join(",");
}

// One cell size for every panel of a frame, so that panels with as many rows line up: a frame fits in about
// 320 px of height and 720 px of width, a cell between 18 and 44 px.
function cellSize(panels) {
  const rows = Math.max(...panels.map((p) => p.matrix.length));
  const cols = panels.reduce((sum, p) => sum + p.matrix[0].length, 0);
  return Math.max(18, Math.min(44, Math.floor(320 / rows), Math.floor(720 / cols)));
}

function drawPanel(group, spec, panel, table, x0, cell) {
  const rows = panel.matrix.length;
  const cols = panel.matrix[0].length;
  const tickSize = 12;
  const rowLabelWidth = Math.max(...panel.rows.map((t) => textWidth(t, tickSize)), 0);
  const rotated = cols > 6;
  const colLabelHeight = rotated ? Math.max(...panel.cols.map((t) => textWidth(t, tickSize)), 0) * 0.72 + 8 : 16;
  const left = x0 + (spec.ylabel ? 22 : 4) + rowLabelWidth + 8;
  const top = 30;
  const width = cols * cell;
  const height = rows * cell;
  const g = svg("g", { class: "cx-panel" });
  group.appendChild(g);
  g.appendChild(svg("text", { x: left + width / 2, y: 18, "text-anchor": "middle", "font-size": 13,
    class: "cx-title" }, panel.title || ""));
  const middle = (spec.vmin + spec.vmax) / 2;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const value = panel.matrix[i][j];
      const x = left + j * cell;
      const y = top + i * cell;
      g.appendChild(svg("rect", { x, y, width: cell, height: cell, fill: colour(table, spec.vmin, spec.vmax, value),
        class: "cx-cell", "data-row": i, "data-col": j, "data-value": value === null ? "" : value }));
      if (spec.annotate && panel.text && value !== null) {
        g.appendChild(svg("text", { x: x + cell / 2, y: y + cell / 2, "text-anchor": "middle",
          "dominant-baseline": "central", "font-size": Math.min(11, cell / 3.6),
          fill: value > middle ? "black" : "white", class: "cx-value" }, panel.text[i][j]));
      }
    }
  }
  g.appendChild(svg("rect", { x: left, y: top, width, height, fill: "none", stroke: "black", "stroke-width": 0.8 }));
  if (panel.highlight_row !== null && panel.highlight_row !== undefined) {
    g.appendChild(svg("rect", { x: left, y: top + panel.highlight_row * cell, width, height: cell, fill: "none",
      stroke: "#e69f00", "stroke-width": 3, class: "cx-highlight" }));
  }
  panel.rows.forEach((token, i) => {
    const y = top + (i + 0.5) * cell;
    g.appendChild(svg("line", { x1: left - 4, y1: y, x2: left, y2: y, stroke: "black" }));
    g.appendChild(svg("text", { x: left - 6, y, "text-anchor": "end", "dominant-baseline": "central",
      "font-size": tickSize }, token));
  });
  panel.cols.forEach((token, j) => {
    const x = left + (j + 0.5) * cell;
    g.appendChild(svg("line", { x1: x, y1: top + height, x2: x, y2: top + height + 4, stroke: "black" }));
    g.appendChild(rotated
      ? svg("text", { x, y: top + height + 8, "text-anchor": "end", "font-size": tickSize,
        transform: `rotate(-45 ${x} ${top + height + 8})`, "dominant-baseline": "hanging" }, token)
      : svg("text", { x, y: top + height + 8, "text-anchor": "middle", "font-size": tickSize,
        "dominant-baseline": "hanging" }, token));
  });
  if (spec.xlabel) {
    g.appendChild(svg("text", { x: left + width / 2, y: top + height + colLabelHeight + 20, "text-anchor": "middle",
      "font-size": 13 }, spec.xlabel));
  }
  if (spec.ylabel) {
    const y = top + height / 2;
    g.appendChild(svg("text", { x: x0 + 14, y, "text-anchor": "middle", "font-size": 13,
      transform: `rotate(-90 ${x0 + 14} ${y})` }, spec.ylabel));
  }
  let right = left + width;
  if (spec.colorbar) {
    const barX = right + 14;
    const barH = height * 0.85;
    const barY = top + (height - barH) / 2;
    const steps = 64;
    for (let k = 0; k < steps; k++) {
      const value = spec.vmin + ((k + 0.5) / steps) * (spec.vmax - spec.vmin);
      g.appendChild(svg("rect", { x: barX, y: barY + barH * (1 - (k + 1) / steps), width: 12,
        height: barH / steps + 0.5, fill: colour(table, spec.vmin, spec.vmax, value) }));
    }
    g.appendChild(svg("rect", { x: barX, y: barY, width: 12, height: barH, fill: "none", stroke: "black",
      "stroke-width": 0.8 }));
    let widest = 0;
    for (const [t, label] of ticks(spec.vmin, spec.vmax)) {
      const y = barY + barH * (1 - (t - spec.vmin) / (spec.vmax - spec.vmin));
      g.appendChild(svg("line", { x1: barX + 12, y1: y, x2: barX + 16, y2: y, stroke: "black" }));
      g.appendChild(svg("text", { x: barX + 18, y, "dominant-baseline": "central", "font-size": 11 }, label));
      widest = Math.max(widest, textWidth(label, 11));
    }
    right = barX + 18 + widest;
  }
  return { right: right + 12, bottom: top + height + colLabelHeight + (spec.xlabel ? 28 : 8) };
}

function describe(data, spec, panel) {
  const s = data.strings;
  return `${s.heatmap}: ${panel.title || ""}. ${spec.ylabel || s.rows}: ${panel.rows.join(", ")}. ` +
    `${spec.xlabel || s.columns}: ${panel.cols.join(", ")}. ${s.table_follows}`;
}

function fillTable(table, data, spec, panel) {
  table.replaceChildren();
  table.appendChild(html("caption", {}, panel.title || data.strings.heatmap));
  const head = html("tr");
  head.appendChild(html("th", { scope: "col" }, `${spec.ylabel || data.strings.rows} \\ ${spec.xlabel || data.strings.columns}`));
  for (const token of panel.cols) head.appendChild(html("th", { scope: "col" }, token));
  table.appendChild(html("thead")).appendChild(head);
  const body = table.appendChild(html("tbody"));
  panel.matrix.forEach((row, i) => {
    const tr = body.appendChild(html("tr"));
    tr.appendChild(html("th", { scope: "row" }, panel.rows[i]));
    row.forEach((value, j) => tr.appendChild(html("td", { "data-value": value === null ? "" : value },
      panel.text ? panel.text[i][j] : String(value))));
  });
}

// The explorer in `el`: controls, the figure (SVG), a hidden table per panel, the readout. `host` gives the
// starting index of each control and hears each move (the anywidget model, or nothing on a static page).
function build(el, data, host = {}) {
  const id = `course-explorer-${++counter}`;
  el.replaceChildren();
  const root = html("div", { class: "course-explorer", id, role: "group", "aria-label": data.strings.explorer,
    "data-lm-suppress-shortcuts": "true" });
  const style = html("style");
  style.textContent = STYLE;
  root.appendChild(style);
  const indices = data.controls.map((c) => (host.initial ? host.initial(c) : c.index));
  const controls = html("div", { class: "cx-controls" });
  root.appendChild(controls);
  const inputs = [];
  data.controls.forEach((control, k) => {
    const box = controls.appendChild(html("div", { class: "cx-control" }));
    const inputId = `${id}-${control.name}`;
    const label = box.appendChild(html("label", { for: inputId }, control.label));
    let input;
    if (control.kind === "select") {
      input = html("select", { id: inputId, name: control.name });
      control.labels.forEach((text, i) => input.appendChild(html("option", { value: i }, text)));
      input.value = String(indices[k]);
    } else if (control.kind === "toggle") {
      input = html("input", { id: inputId, name: control.name, type: "checkbox" });
      input.checked = indices[k] === 1;
      box.insertBefore(input, label);
    } else {
      input = html("input", { id: inputId, name: control.name, type: "range", min: 0,
        max: control.options.length - 1, step: 1 });
      input.value = String(indices[k]);
    }
    if (control.kind !== "toggle") box.appendChild(input);
    const shown = control.kind === "slider" ? box.appendChild(html("output", { for: inputId })) : null;
    inputs.push({ input, shown });
    const read = () => (control.kind === "toggle" ? (input.checked ? 1 : 0) : Number(input.value));
    const moved = () => {
      const index = read();
      if (index === indices[k]) return;
      indices[k] = index;
      draw();
      if (host.set) host.set(control, index);
    };
    input.addEventListener("input", moved);
    input.addEventListener("change", moved);
    // the arrow keys move this control, not JupyterLab's cell selection (its shortcuts listen on the document)
    input.addEventListener("keydown", (event) => event.stopPropagation());
  });
  const figure = root.appendChild(html("div", { class: "cx-figure" }));
  const tables = root.appendChild(html("div", { class: "cx-hidden cx-tables" }));
  const readout = root.appendChild(html("output", { class: "cx-readout", "aria-live": "polite" }));
  el.appendChild(root);

  function draw() {
    data.controls.forEach((control, k) => {
      const { input, shown } = inputs[k];
      if (control.kind === "toggle") input.checked = indices[k] === 1;
      else input.value = String(indices[k]);
      if (control.kind === "slider") {
        input.setAttribute("aria-valuetext", control.labels[indices[k]]);
        shown.textContent = control.labels[indices[k]];
      }
    });
    const frame = data.frames[frameKey(indices)];
    root.dataset.frame = frameKey(indices);
    const picture = svg("svg", { role: "img", class: "cx-svg" });
    const labels = [];
    let x = 0;
    let bottom = 0;
    tables.replaceChildren();
    const cell = cellSize(frame.panels);
    frame.panels.forEach((panel, p) => {
      const spec = data.panels[p];
      const box = drawPanel(picture, spec, panel, data.colormaps[spec.cmap], x, cell);
      x = box.right;
      bottom = Math.max(bottom, box.bottom);
      labels.push(describe(data, spec, panel));
      fillTable(tables.appendChild(html("table", { class: "cx-table", "data-panel": p })), data, spec, panel);
    });
    picture.setAttribute("viewBox", `0 0 ${x} ${bottom}`);
    picture.setAttribute("width", x);
    picture.setAttribute("height", bottom);
    picture.setAttribute("aria-label", labels.join(" "));
    figure.replaceChildren(picture);
    readout.textContent = frame.readout || "";
  }

  draw();
  return {
    root,
    setIndex(name, index) {
      const k = data.controls.findIndex((c) => c.name === name);
      if (k < 0 || index < 0 || index === indices[k]) return;
      indices[k] = index;
      draw();
    },
  };
}

function optionIndex(control, value) {
  const wanted = JSON.stringify(value);
  return control.options.findIndex((option) => JSON.stringify(option) === wanted);
}

// A page with no kernel: the explorer from its data, moved by its own controls only.
export function mount(el, data) {
  return build(el, data);
}

// anywidget (JupyterLab): the data is the `_data` traitlet, each control's value a traitlet of its name.
export function render({ model, el }) {
  const data = model.get("_data");
  const view = build(el, data, {
    initial(control) {
      const index = optionIndex(control, model.get(control.name));
      return index < 0 ? control.index : index;
    },
    set(control, index) {
      model.set(control.name, control.options[index]);
      model.save_changes();
    },
  });
  const listeners = data.controls.map((control) => {
    const listener = () => view.setIndex(control.name, optionIndex(control, model.get(control.name)));
    model.on(`change:${control.name}`, listener);
    return [control.name, listener];
  });
  return () => listeners.forEach(([name, listener]) => model.off(`change:${name}`, listener));
}

export default { render };
