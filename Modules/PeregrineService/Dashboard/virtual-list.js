// A virtualized list: rows of one height inside a scroller; only the rows in view (and a few
// more) exist, placed with transforms and reused as the list scrolls. 10,000 rows cost the same
// as thirty.

export class VirtualList {
  /**
   * @param scroller  the scrolling element (it holds `spacer`)
   * @param spacer    an element whose height makes the scroll range
   * @param rowHeight the height of every row, in CSS pixels
   * @param render    render(element, index): fills a pooled element for the row at `index`
   * @param create    create(): a new pooled element
   */
  constructor(scroller, spacer, rowHeight, { render, create }) {
    this.scroller = scroller;
    this.spacer = spacer;
    this.rowHeight = rowHeight;
    this.render = render;
    this.create = create;
    this.count = 0;
    this.pool = [];
    this.viewHeight = scroller.clientHeight || 600;
    this.frame = 0;
    this.overscan = 4;
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => {
      this.viewHeight = this.scroller.clientHeight || this.viewHeight;
      this.schedule();
    }).observe(scroller);
  }

  setCount(count) {
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
    this.scroller.setAttribute('aria-rowcount', String(count));
    this.schedule();
  }

  /** Renders again at the next frame (once, however often it is asked). */
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  /** Renders now. */
  paint() {
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / this.rowHeight) - this.overscan);
    const last = Math.min(this.count - 1, Math.ceil((top + this.viewHeight) / this.rowHeight) + this.overscan);
    const needed = Math.max(0, last - first + 1);
    while (this.pool.length < needed) {
      const element = this.create();
      element.dataset.index = '-1';
      this.scroller.append(element);
      this.pool.push(element);
    }
    // Each element keeps the row it had when that row is still in view: fewer writes.
    const byIndex = new Map();
    const free = [];
    for (const element of this.pool) {
      const index = Number(element.dataset.index);
      if (index >= first && index <= last && !byIndex.has(index)) byIndex.set(index, element);
      else free.push(element);
    }
    for (let index = first; index <= last; index += 1) {
      let element = byIndex.get(index);
      if (!element) {
        element = free.pop();
        element.dataset.index = String(index);
        element.style.transform = `translateY(${index * this.rowHeight}px)`;
        element.hidden = false;
      }
      this.render(element, index);
    }
    for (const element of free) {
      element.dataset.index = '-1';
      element.hidden = true;
    }
    this.first = first;
    this.last = last;
  }

  /** The pooled element showing `index`, if it is in view. */
  elementAt(index) {
    return this.pool.find((element) => Number(element.dataset.index) === index) || null;
  }

  /** Scrolls so that `index` is in view. */
  reveal(index) {
    const top = index * this.rowHeight;
    const bottom = top + this.rowHeight;
    if (top < this.scroller.scrollTop) this.scroller.scrollTop = top;
    else if (bottom > this.scroller.scrollTop + this.viewHeight) this.scroller.scrollTop = bottom - this.viewHeight;
    this.paint();
  }
}
