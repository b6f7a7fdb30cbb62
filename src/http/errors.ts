/**
 * The Service's error helpers (reference §6.1) and the one error type every handler throws.
 * Bodies are part of the API contract: clients match on these exact texts.
 */

export class ApiError extends Error {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  /** `text/plain`: `body` is sent as it is (the throttles' 429); JSON otherwise. */
  readonly contentType: 'application/json' | 'text/plain';
  constructor(
    statusCode: number,
    body: unknown,
    headers: Record<string, string> = {},
    contentType: 'application/json' | 'text/plain' = 'application/json',
  ) {
    super(typeof body === 'object' && body !== null ? JSON.stringify(body) : String(body));
    this.statusCode = statusCode;
    this.body = body;
    this.headers = headers;
    this.contentType = contentType;
  }
}

const withReason = (base: string, reason?: string) => (reason ? `${base} - ${reason}` : base);

export const unauthorized = (reason?: string) => new ApiError(401, { message: withReason('401 Unauthorized', reason) });
export const forbidden = (reason?: string) => new ApiError(403, { message: withReason('403 Forbidden', reason) });
/** A 403 whose message has no "403 Forbidden - " prefix (some services answer so). */
export const forbiddenMessage = (message: string) => new ApiError(403, { message });
export const badRequest = (reason?: string) => new ApiError(400, { message: withReason('400 Bad request', reason) });
/** The spec's shape for a missing attribute (DESIGN, Fidelity). */
/** render_api_error!(message, :bad_request): the message alone. */
export const badRequestMessage = (message: string) => new ApiError(400, { message });

export const missingAttribute = (attr: string) => badRequest(`"${attr}" not given`);
/** `not_found!('User')` → `404 User Not Found`; bare `404 Not Found`. */
export const notFound = (resource?: string) => new ApiError(404, { message: resource ? `404 ${resource} Not Found` : '404 Not Found' });
/** ActiveRecord::RecordNotFound's text: lowercase "found" (reference §6.2). */
export const recordNotFound = () => new ApiError(404, { message: '404 Not found' });
export const conflict = (message = '409 Conflict') => new ApiError(409, { message });
/** The Service's `conflict!(record.errors.messages)`: 409 with the field errors as the message. */
export const conflictFields = (errors: Record<string, unknown>) => new ApiError(409, { message: errors });
export const unprocessable = (message = '422 Unprocessable Entity') => new ApiError(422, { message });
export const preconditionFailed = () => new ApiError(412, { message: '412 Precondition Failed' });
export const notAllowed = () => new ApiError(405, { message: '405 Method Not Allowed' });
/** Grape's parameter errors: `{"error": "<messages joined by ', '>"}`. */
/** `render_api_error!(message, status)` with a message of the Service's own, no status prefix (merge requests' 406 and 409). */
export const apiError = (status: 400 | 404 | 405 | 406 | 409, message: string) => new ApiError(status, { message });
/** `render_api_error!(errors[:key], status)` with a model error list: `{"message":["…"]}` (merge requests' 409 and 422). */
export const messageList = (status: 409 | 422, messages: string[]) => new ApiError(status, { message: messages });
export const invalidParams = (messages: string[]) => new ApiError(400, { error: messages.join(', ') });
/** Model validation failure: `{"message": {"field": ["text", …]}}`. */
export const validationFailed = (errors: Record<string, unknown>) => new ApiError(400, { message: errors });
/** Grape's catch-all for unknown routes: the key is `error`. */
export const routeNotFound = () => new ApiError(404, { error: '404 Not Found' });
export const internalError = () => new ApiError(500, { message: '500 Internal Server Error' });

/**
 * The Bearer-token errors of rack-oauth2 (reference §5.1): 401 invalid_token with a
 * WWW-Authenticate header, or 403 insufficient_scope without one.
 */
export function invalidToken(description: string): ApiError {
  return new ApiError(401, { error: 'invalid_token', error_description: description }, {
    'www-authenticate': `Bearer realm="", error="invalid_token", error_description="${description}"`,
  });
}

export const TOKEN_EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
export const TOKEN_REVOKED = 'Token was revoked. You have to re-authorize from the user.';
export const IMPERSONATION_DISABLED = 'Token is an impersonation token but impersonation was disabled.';

export function insufficientScope(scopes: readonly string[]): ApiError {
  return new ApiError(403, {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: scopes.join(' '),
  });
}
