// The action icons, built as SVG elements (no markup strings anywhere in the page).

const PATHS = {
  pause: 'M4 3h3v10H4zM9 3h3v10H9z',
  resume: 'M4 2.5v11l9-5.5z',
  stop: 'M3.5 3.5h9v9h-9z',
  restart: 'M8 2.5a5.5 5.5 0 1 0 5.2 7.3l-1.6-.5A3.8 3.8 0 1 1 8 4.2V6.5l3.5-3-3.5-3z',
  trash: 'M5.5 2h5l.5 1.5H14V5H2V3.5h3zM3.5 6h9l-.8 8.5H4.3z',
  delete: 'M3.7 2.3 8 6.6l4.3-4.3 1.4 1.4L9.4 8l4.3 4.3-1.4 1.4L8 9.4l-4.3 4.3-1.4-1.4L6.6 8 2.3 3.7z',
  error: 'M7 2h2v8H7zM7 11.5h2v2H7z',
  more: 'M2 7h2.5v2.5H2zM6.75 7h2.5v2.5h-2.5zM11.5 7H14v2.5h-2.5z',
  restore: 'M8 2.5A5.5 5.5 0 1 1 2.8 9.8l1.6-.5A3.8 3.8 0 1 0 8 4.2V6.5L4.5 3.5 8 .5z',
  grip: 'M5 3h2v2H5zM9 3h2v2H9zM5 7h2v2H5zM9 7h2v2H9zM5 11h2v2H5zM9 11h2v2H9z',
};

/** An icon element: a 16×16 SVG with one path. */
export function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', PATHS[name]);
  svg.append(path);
  return svg;
}
