/** Small inline icons (constant SVG markup, stroke = currentColor). */
const svg = (body) =>
  `<svg width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">${body}</svg>`;

export const icons = {
  check: svg('<path d="M5 12.5l4.5 4.5L19 7.5"/>'),
  clock: svg('<circle cx="12" cy="12" r="8.5"/><path d="M12 7.5V12l3 2"/>'),
  cross: svg('<path d="M7 7l10 10M17 7L7 17"/>'),
  spinner: '<span class="spinner"></span>',
};
