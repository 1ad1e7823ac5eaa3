// Numbers as people read them. Pure functions, no DOM.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Bytes in binary units: 0 B, 1.5 KiB, 12 MiB. */
export function bytes(count) {
  let value = Number(count) || 0;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** A speed in bytes per second. */
export function speed(perSecond) {
  return `${bytes(perSecond)}/s`;
}

/** A duration in seconds as 45s, 3m 20s, 2h 5m, 3d 4h; an empty string when unknown. */
export function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** A fraction as a whole percentage; an empty string when the total is unknown. */
export function percent(done, total) {
  if (!(total > 0)) return '';
  return `${Math.min(100, Math.floor((done / total) * 100))}%`;
}

/** The remaining time of a download, or an empty string. */
export function remaining(done, total, perSecond) {
  if (!(total > 0) || !(perSecond > 0) || done >= total) return '';
  return duration((total - done) / perSecond);
}

/** aria2's speed limit syntax (0, 512K, 2M) as bytes per second, or null when malformed. */
export function parseLimit(text) {
  const match = /^\s*(\d+)\s*([kKmM]?)\s*$/.exec(text);
  if (!match) return null;
  const factor = { '': 1, k: 1024, m: 1024 * 1024 }[match[2].toLowerCase()];
  return Number(match[1]) * factor;
}

/** Bytes per second in aria2's limit syntax, the shortest exact form. */
export function formatLimit(perSecond) {
  const value = Number(perSecond) || 0;
  if (value > 0 && value % (1024 * 1024) === 0) return `${value / (1024 * 1024)}M`;
  if (value > 0 && value % 1024 === 0) return `${value / 1024}K`;
  return String(value);
}
