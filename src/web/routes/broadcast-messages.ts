/**
 * The stylesheet of the current broadcast messages' colours (web/broadcast.ts): a banner's
 * `color` and `font` as rules for its class, since the pages' policy allows no style attribute.
 * Only values of the API's colour form (`#` and three or six hex digits) are written into it.
 */
import type { WebArea } from '../router.ts';
import { broadcastStylesheet } from '../broadcast.ts';

const broadcastMessages: WebArea = (web) => {
  web.page('GET', '/-/broadcast_messages.css', async (p) => p.reply.code(200)
    .type('text/css; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    // The address carries the content's hash; a short life covers a message that ends meanwhile.
    .header('cache-control', 'public, max-age=300')
    .send(broadcastStylesheet()));
};

export default broadcastMessages;
