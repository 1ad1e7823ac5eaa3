// The overall speed of the last minutes, drawn on a canvas by the page itself.

export class SpeedGraph {
  /** One sample a second, `capacity` of them (300: five minutes). */
  constructor(canvas, capacity = 300) {
    this.canvas = canvas;
    this.capacity = capacity;
    this.samples = [];
    this.color = null;
    // The theme's color, read once per theme (reading styles each second would force a restyle).
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      this.color = null;
      this.draw();
    });
  }

  add(bytesPerSecond) {
    this.samples.push(Math.max(0, Number(bytesPerSecond) || 0));
    if (this.samples.length > this.capacity) this.samples.shift();
    this.draw();
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 240;
    const height = canvas.clientHeight || 40;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const context = canvas.getContext('2d');
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    if (this.color === null) this.color = getComputedStyle(canvas).getPropertyValue('--graph').trim() || '#1f6feb';
    const color = this.color;
    const peak = Math.max(1, ...this.samples);
    const step = width / (this.capacity - 1);
    const offset = this.capacity - this.samples.length;
    context.beginPath();
    context.moveTo(offset * step, height);
    this.samples.forEach((value, index) => {
      context.lineTo((offset + index) * step, height - 2 - (value / peak) * (height - 4));
    });
    context.lineTo((offset + this.samples.length - 1) * step, height);
    context.closePath();
    context.globalAlpha = 0.25;
    context.fillStyle = color;
    context.fill();
    context.globalAlpha = 1;
    context.strokeStyle = color;
    context.lineWidth = 1.5;
    context.beginPath();
    this.samples.forEach((value, index) => {
      const x = (offset + index) * step;
      const y = height - 2 - (value / peak) * (height - 4);
      if (index === 0) context.moveTo(x, y);
      else context.lineTo(x, y);
    });
    context.stroke();
  }
}
