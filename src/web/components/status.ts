/** A pipeline's or job's status as a labelled badge (colour and text: never colour alone). */
import { html, type SafeHtml } from '../html.ts';

const LABELS: Record<string, string> = {
  success: 'passed', failed: 'failed', running: 'running', pending: 'pending', created: 'created', canceled: 'canceled',
  skipped: 'skipped', manual: 'manual', scheduled: 'scheduled', preparing: 'preparing', waiting_for_resource: 'waiting',
};

export function statusBadge(status: string): SafeHtml {
  const label = LABELS[status] ?? status;
  return html`<span class="status status-${/^[a-z_]+$/.test(status) ? status : 'unknown'}">${label}</span>`;
}
