/** Secrets never reach the logs: credential query parameters are masked in every logged URL. */
const SECRET_QUERY = /([?&](?:private_token|access_token|job_token|token|bearer_token|client_secret|code|refresh_token|password)=)[^&]*/gi;

export function redactUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_QUERY, '$1[FILTERED]') : url;
}
