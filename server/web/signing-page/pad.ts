/**
 * The signature pad: pointer events, so a mouse, a pen and a finger draw alike (the canvas has
 * `touch-action: none`, so a finger draws instead of scrolling); or a PNG/JPEG picture fitted
 * into it. What is signed is the drawing cut to its ink, as a PNG with a transparent background.
 */

export interface SignaturePad {
  isEmpty(): boolean;
  clear(): void;
  /** Draws the picture fitted into the pad (replacing what was there). */
  load(picture: CanvasImageSource & { width: number; height: number }): void;
  /** The drawing cut to its ink with a small margin, as a PNG data URL. */
  toDataUrl(): string;
}

const ink = '#0b2e6b';
const margin = 8;

export function signaturePad(canvas: HTMLCanvasElement, changed: () => void): SignaturePad {
  const context = canvas.getContext('2d');
  if (!context) throw new Error('no 2D canvas');
  const style = () => {
    context.lineWidth = 3;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.strokeStyle = ink;
    context.fillStyle = ink;
  };
  style();
  let empty = true;
  let drawing: number | null = null;
  let last: { x: number; y: number } | null = null;

  const point = (event: PointerEvent) => {
    const box = canvas.getBoundingClientRect();
    return {
      x: ((event.clientX - box.left) * canvas.width) / box.width,
      y: ((event.clientY - box.top) * canvas.height) / box.height,
    };
  };
  const mark = () => {
    if (empty) {
      empty = false;
      changed();
    }
  };

  canvas.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    event.preventDefault();
    drawing = event.pointerId;
    canvas.setPointerCapture(event.pointerId);
    last = point(event);
    // A tap leaves a dot (the dot of an i, a full stop).
    context.beginPath();
    context.arc(last.x, last.y, context.lineWidth / 2, 0, Math.PI * 2);
    context.fill();
    mark();
  });
  canvas.addEventListener('pointermove', (event) => {
    if (drawing !== event.pointerId || !last) return;
    event.preventDefault();
    const points = event.getCoalescedEvents?.() ?? [event];
    context.beginPath();
    context.moveTo(last.x, last.y);
    for (const each of points.length > 0 ? points : [event]) {
      last = point(each);
      context.lineTo(last.x, last.y);
    }
    context.stroke();
  });
  const stop = (event: PointerEvent) => {
    if (drawing !== event.pointerId) return;
    drawing = null;
    last = null;
  };
  canvas.addEventListener('pointerup', stop);
  canvas.addEventListener('pointercancel', stop);

  const clear = () => {
    context.clearRect(0, 0, canvas.width, canvas.height);
    style();
    if (!empty) {
      empty = true;
      changed();
    }
  };

  return {
    isEmpty: () => empty,
    clear,
    load(picture) {
      clear();
      const scale = Math.min(
        (canvas.width - 2 * margin) / picture.width,
        (canvas.height - 2 * margin) / picture.height,
        1,
      );
      const width = picture.width * scale;
      const height = picture.height * scale;
      context.drawImage(
        picture,
        (canvas.width - width) / 2,
        (canvas.height - height) / 2,
        width,
        height,
      );
      mark();
    },
    toDataUrl() {
      const { width, height } = canvas;
      const pixels = context.getImageData(0, 0, width, height).data;
      let left = width;
      let top = height;
      let right = -1;
      let bottom = -1;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          if (pixels[(y * width + x) * 4 + 3]! === 0) continue;
          if (x < left) left = x;
          if (x > right) right = x;
          if (y < top) top = y;
          if (y > bottom) bottom = y;
        }
      }
      if (right < 0) return canvas.toDataURL('image/png');
      left = Math.max(0, left - margin);
      top = Math.max(0, top - margin);
      right = Math.min(width - 1, right + margin);
      bottom = Math.min(height - 1, bottom + margin);
      const cut = document.createElement('canvas');
      cut.width = right - left + 1;
      cut.height = bottom - top + 1;
      cut.getContext('2d')!.drawImage(canvas, -left, -top);
      return cut.toDataURL('image/png');
    },
  };
}
