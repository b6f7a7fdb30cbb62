// Copy buttons (the project page's clone URLs): a button with data-copy="<input id>" copies that
// field's value. The buttons are hidden without script, where selecting the field does the same.
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const field = document.getElementById(button.dataset.copy);
    if (!field || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(field.value);
        button.textContent = 'Copied';
      } catch {
        field.select();
      }
    });
  }
});
