// Closing a broadcast message (web/broadcast.ts): the button sets the hide_broadcast_message_<id>
// cookie until the message ends, as the Service's script does, and removes the message from the
// page; the server leaves it out of the next pages. Without script the button stays hidden.
'use strict';
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button.broadcast-dismiss')) {
    const id = button.dataset.id;
    const expires = new Date(button.dataset.expires);
    if (!/^\d+$/.test(id || '') || Number.isNaN(expires.getTime())) continue;
    button.hidden = false;
    button.addEventListener('click', () => {
      document.cookie = `hide_broadcast_message_${id}=true; path=/; expires=${expires.toUTCString()}; SameSite=Lax`;
      const message = document.getElementById(`broadcast-message-${id}`);
      if (message) message.remove();
    });
  }
});
