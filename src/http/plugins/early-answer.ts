/**
 * An answer sent before the request body was read to its end (a 416 on a log append, a 401 or
 * 404 before an upload is looked at) must not leave the client hanging: a client that writes its
 * whole body before it reads the answer (gitlab-runner, most HTTP libraries) would wait forever
 * for a server that stopped reading. A small rest is drained so the connection can be kept; a
 * larger or unknown one closes the connection after the answer (issue 13, RFC 9112 §9.6).
 */
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';

/** Drained without a second thought: what a client may still be sending after an early answer. */
const DRAIN_LIMIT = 1024 * 1024;
/** How long a closing connection may still deliver bytes before it is cut. */
const CLOSE_WAIT_MS = 5000;

/** Ends our side, reads and drops what is still in flight for a moment, then lets go of the socket. */
function closeAfterAnswer(socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  socket.end();
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), CLOSE_WAIT_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

export default fp(async (app) => {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    // `complete` is false while the HTTP parser still expects body bytes (undefined under inject),
    // but also for a request without a body answered synchronously, before the parser's end of
    // message was handled (GET /users/:id from remembered rows): such a request has nothing in
    // flight, and closing its connection cost every hot read a new TCP connection.
    const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
    if (raw.complete === false && hasBody) {
      const length = Number(request.headers['content-length']);
      if (!raw.destroyed && Number.isFinite(length) && length <= DRAIN_LIMIT) {
        raw.resume();
      } else {
        // A handler that stopped reading midway (a stream it piped was destroyed) leaves the socket
        // paused: nothing would read or close it. Say so, then end the connection after the answer.
        reply.header('connection', 'close');
        reply.raw.once('finish', () => closeAfterAnswer(raw.socket));
      }
    }
    done(null, payload);
  });
}, { name: 'early-answer' });
