/** The batch page's plots, drawn as inline SVG (presentation attributes only, no style). */
import { text } from "./escape.ts";

const W = 420;
const H = 220;
const PAD = { left: 48, right: 12, top: 18, bottom: 32 };

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toPrecision(3);
}

/** Fewer values than this make no histogram: a few bars say less than the table's numbers. */
export const HISTOGRAM_MIN_VALUES = 5;

/**
 * A histogram of `values` in `bins` equal bins, with the axis named `unit`: each bar labelled
 * with its count above and its value (or the bins' edges) below. Fewer than
 * HISTOGRAM_MIN_VALUES values make a note instead.
 */
export function histogram(values: readonly number[], unit: string, bins = 12): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return `<p class="note">no values</p>`;
  if (finite.length < HISTOGRAM_MIN_VALUES) {
    return `<p class="note">${finite.length} task(s): too few for a histogram; the table ` +
      "above gives each one.</p>";
  }
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  // Whole numbers over a short range (steps): one bar per value, no empty bars between.
  if (finite.every(Number.isInteger) && hi - lo + 1 <= bins) bins = hi - lo + 1;
  const whole = finite.every(Number.isInteger) && hi - lo + 1 === bins;
  const width = whole ? 1 : hi > lo ? (hi - lo) / bins : 1;
  const range = (i: number) =>
    whole ? num(lo + i) : `${num(lo + i * width)}–${num(lo + (i + 1) * width)}`;
  const counts = new Array(bins).fill(0);
  for (const v of finite) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]++;
  const top = Math.max(...counts);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const barW = plotW / bins;
  const below = H - PAD.bottom + 13;
  const bars = counts.map((c, i) => {
    const h = (c / top) * plotH;
    const x = PAD.left + i * barW;
    const mid = (x + (barW - 2) / 2).toFixed(1);
    return `<rect x="${x.toFixed(1)}" y="${(PAD.top + plotH - h).toFixed(1)}" width="${
      (barW - 2).toFixed(1)
    }" height="${h.toFixed(1)}" fill="#4a78b0"><title>${range(i)} ${
      text(unit)
    }: ${c}</title></rect>${
      c > 0
        ? `<text class="count" x="${mid}" y="${
          (PAD.top + plotH - h - 2).toFixed(1)
        }" text-anchor="middle">${c}</text>`
        : ""
    }${
      whole
        ? `<text class="bin" x="${mid}" y="${below}" text-anchor="middle">${range(i)}</text>`
        : ""
    }`;
  }).join("");
  // Bins of a range: their edges, a few of them, under the axis.
  const every = Math.ceil(bins / 4);
  const edges = whole ? "" : Array.from({ length: bins + 1 }, (_, i) => i)
    .filter((i) => i % every === 0 || i === bins)
    .map((i) =>
      `<text class="bin" x="${(PAD.left + i * barW).toFixed(1)}" y="${below}" text-anchor="${
        i === 0 ? "start" : i === bins ? "end" : "middle"
      }">${num(lo + i * width)}</text>`
    ).join("");
  return svg(
    `${bars}${edges}${axes(0, top, "tasks")}<text x="${W - PAD.right}" y="${
      H - 4
    }" text-anchor="end">${text(unit)}</text>`,
  );
}

/** Each task's cost as a dot, in a column for passed tasks and one for the others. */
export function costStrip(
  points: readonly { cost: number; passed: boolean; label: string }[],
): string {
  const finite = points.filter((p) => Number.isFinite(p.cost));
  if (finite.length === 0) return `<p class="note">no task reported a cost</p>`;
  const top = Math.max(...finite.map((p) => p.cost)) || 1;
  const plotH = H - PAD.top - PAD.bottom;
  const columns = [{ passed: true, x: PAD.left + 90 }, { passed: false, x: PAD.left + 270 }];
  const dots = finite.map((p, i) => {
    const column = columns[p.passed ? 0 : 1];
    // A fixed spread by position, so the same batch always draws the same picture.
    const jitter = ((i * 37) % 61) - 30;
    const y = PAD.top + plotH - (p.cost / top) * plotH;
    return `<circle cx="${column.x + jitter}" cy="${y.toFixed(1)}" r="3" fill="${
      p.passed ? "#1e8449" : "#c0392b"
    }" fill-opacity="0.7"><title>${text(p.label)}: $${p.cost.toFixed(4)}</title></circle>`;
  }).join("");
  const labels = `<text x="${columns[0].x}" y="${
    H - 8
  }" text-anchor="middle">passed</text><text x="${columns[1].x}" y="${
    H - 8
  }" text-anchor="middle">not passed</text>`;
  return svg(`${dots}${axes(0, top, "$")}${labels}`);
}

function axes(lo: number, hi: number, unit: string): string {
  const bottom = H - PAD.bottom;
  return `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${bottom}" stroke="#555"/>` +
    `<line x1="${PAD.left}" y1="${bottom}" x2="${W - PAD.right}" y2="${bottom}" stroke="#555"/>` +
    `<text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end">${num(hi)}</text>` +
    `<text x="${PAD.left - 4}" y="${bottom}" text-anchor="end">${num(lo)}</text>` +
    `<text x="4" y="${PAD.top + 8}">${text(unit)}</text>`;
}

function svg(content: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${content}</svg>`;
}
