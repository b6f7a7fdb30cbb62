/**
 * How pages are declared (issue 33). Route files under src/web/routes/<area>/ export a function
 * that receives a `WebRoutes` and declares their pages on it:
 *
 *   web.page('GET', '/explore/projects', async (p) => html`…`)          a path of its own
 *   web.page('GET', '/-/snippets/:id', async (p) => … p.params.id …)     its parameters typed from the path
 *   web.project('GET', 'tree', async (p) => …)                          /<namespace…>/<project>/-/tree/…
 *   web.project('GET', '', async (p) => …)                              the project's overview
 *   web.namespace('user' | 'group', async (p) => …)                     /<user>, /<group>/<subgroup>
 *   web.group('GET', 'merge_requests', async (p) => …)                  /groups/<group…>/-/merge_requests/…, /<group…>/-/merge_requests/…
 *
 * Every handler gets the signed-in session (or null), and a project page gets its project as
 * the API's `:id` finds it, with the API's permission checks (http/loaders/containers.ts
 * findVisibleProject): a project the viewer may not read answers the same 404 page as one that
 * does not exist, signed in or not. A POST needs a session and the form's CSRF token before its
 * handler runs. A handler answers with the page's HTML (sent as 200), or with the reply it sent
 * itself; `throw pageError(404 | 403)` sends the error page.
 *
 * A group is also addressed as `/groups/<group…>`: that is the web_url the API hands out for
 * every group (entities/group.ts, as the Service's group_url), and `/groups/<group…>/-/<segment>`
 * holds the group's own pages; `groups` is a reserved path (no user, group or project takes it).
 *
 * Project and namespace pages have no route of their own: namespaces nest to any depth, so no
 * fixed route shape could hold them without catching the API's unknown paths. They are answered
 * for the requests no route matched (plugins/error-handling.ts `unmatchedPages`), below every
 * other route: git's smart HTTP (`/<project>.git/info/refs`), uploads, badges, the API and the
 * pages with paths of their own all match first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KilnContext } from '../http/context.ts';
import type { NamespaceRow, UserRow } from '../db/types.ts';
import type { ProjectAction } from '../domain/permissions/project.policy.ts';
import { canOnProject } from '../domain/permissions/project.policy.ts';
import { findVisibleGroup, findVisibleProject, type GroupContext, type ProjectContext } from '../http/loaders/containers.ts';
import { findUserByUsername } from '../domain/users/users.queries.ts';
import { findUserNamespace } from '../domain/namespaces/namespaces.queries.ts';
import { isStorableText } from '../db/constraints.ts';
import type { MarkdownRenderer } from '../domain/markdown/render-pool.ts';
import { SafeHtml } from './html.ts';
import { frame, redirect, sendPage, type Crumb, type SignedIn } from './layout.ts';
import { currentSession, redirectToSignIn, validSessionCsrf, type WebSession } from './session.ts';
import { errorPage } from './pages/errors.ts';
import { projectSidebar } from './project-nav.ts';
import { rejectForgedForm } from './routes/sign-in.ts';
import { setBroadcastAccessLevel } from './broadcast.ts';
import type { PageBroadcasts } from './page-broadcasts.ts';

export type Method = 'GET' | 'POST';

export class PageError extends Error {
  readonly status: 403 | 404;
  constructor(status: 403 | 404) {
    super(status === 404 ? 'Page Not Found' : 'Forbidden');
    this.status = status;
  }
}

/** Thrown by a page for its error page: 404 for what the viewer may not know exists, 403 otherwise. */
export const pageError = (status: 403 | 404) => new PageError(status);

export interface PageRequest {
  request: FastifyRequest;
  reply: FastifyReply;
  ctx: KilnContext;
  session: WebSession | null;
  signedIn: SignedIn | null;
  /** Whether a project page of this segment exists (link to pipelines only once their page does). */
  hasProjectPage(segment: string): boolean;
}

export interface WebProject extends ProjectContext {
  /** `namespace/…/project`, as the project's pages are addressed. */
  fullPath: string;
  can(action: ProjectAction): boolean;
}

export interface ProjectRenderOptions {
  title: string;
  body: SafeHtml;
  /** The sidebar entry of this page (a project page segment: '', 'tree', 'pipelines', …). */
  active: string;
  breadcrumbs?: Crumb[];
  scripts?: string[];
  heading?: boolean;
}

export interface ProjectPageRequest extends PageRequest {
  project: WebProject;
  /** The decoded path segments after `/-/<segment>/` (a ref and a file path, an id …). */
  rest: string[];
  /** The page in the frame with the project's sidebar and breadcrumbs. */
  render(o: ProjectRenderOptions): SafeHtml;
}

export type NamespaceKind = 'user' | 'group';

export interface UserPageRequest extends PageRequest { user: UserRow; namespace: NamespaceRow }
export interface GroupPageRequest extends PageRequest { group: GroupContext }
/** A group's page under `/<group>/-/<segment>/…` (also `/groups/<group>/-/…`, the Service's own form). */
export interface GroupSegmentRequest extends GroupPageRequest {
  /** The decoded path segments after `/-/<segment>/`. */
  rest: string[];
}

export type PageResult = SafeHtml | FastifyReply;

type Handler<P> = (p: P) => Promise<PageResult>;

/** The names of a page route's path parameters: each `:name` segment, and `*` for a trailing wildcard. */
type ParamNames<U extends string> =
  U extends `${string}:${infer Name}/${infer Rest}` ? Name | ParamNames<Rest>
    : U extends `${string}:${infer Name}` ? Name
      : U extends `${string}*` ? '*' : never;

/** A page's path parameters, decoded, as the route's URL declares them (`'/-/snippets/:id'` → `{ id }`). */
export type PathParams<U extends string> = { readonly [K in ParamNames<U>]: string };

export interface WebRoutes {
  /** The Markdown renderer of the API (sanitised; long texts render off the event loop). */
  markdown: MarkdownRenderer;
  /** A page of a path of its own; its path parameters (`:id`, a trailing `*`) are typed from `url`. */
  page<U extends string>(method: Method, url: U, handler: Handler<PageRequest & { params: PathParams<U> }>): void;
  project(method: Method, segment: string, handler: Handler<ProjectPageRequest>): void;
  namespace(kind: 'user', handler: Handler<UserPageRequest>): void;
  namespace(kind: 'group', handler: Handler<GroupPageRequest>): void;
  /**
   * A page of a group under `/groups/<group…>/-/<segment>/…` (the Service's address), also reached
   * as `/<group…>/-/<segment>/…` when that path names no project with a page of that segment.
   */
  group(method: Method, segment: string, handler: Handler<GroupSegmentRequest>): void;
}

/** A route file's contribution: called once with the app's WebRoutes. */
export type WebArea = (web: WebRoutes) => void;

/** Project pages declared with `web.project` that are also answered at `/<project>/<segment>`. */
const PROJECT_ROOT_ACTIONS = new Set(['download_export']);
/** Top-level words that are never a user, group or project page (the API, OAuth, assets …). */
const NOT_PAGES = new Set(['api', 'oauth', '.well-known', '-', 'uploads', 'assets']);
const MAX_PATH = 2048;
const MAX_SEGMENT = 255;

async function pageRequest(
  ctx: KilnContext, request: FastifyRequest, reply: FastifyReply, hasProjectPage: (segment: string) => boolean,
): Promise<PageRequest> {
  const session = await currentSession(ctx, request);
  return {
    request, reply, ctx, session, hasProjectPage,
    signedIn: session ? { username: session.user.username, name: session.user.name, csrfToken: session.csrfToken } : null,
  };
}

/** Runs a handler: the POST guard before it, its page or its error page after it. */
async function run<P extends PageRequest>(method: string, p: P, handler: Handler<P>): Promise<FastifyReply> {
  if (method === 'POST') {
    if (!p.session) return redirectToSignIn(p.request, p.reply);
    if (!validSessionCsrf(p.ctx, p.request, p.session)) return rejectForgedForm(p.reply);
  }
  try {
    const result = await handler(p);
    return result instanceof SafeHtml ? sendPage(p.reply, 200, result) : result;
  } catch (err) {
    if (err instanceof PageError) return sendError(p, err.status);
    throw err;
  }
}

export function sendError(p: PageRequest, status: 403 | 404): FastifyReply {
  return sendPage(p.reply, status, errorPage(status, p.signedIn, p.request.url));
}

/** The path's segments, decoded; null when it cannot name a page (bad escapes, too long, NUL). */
function segmentsOf(url: string): string[] | null {
  const path = url.split('?', 1)[0]!;
  if (path.length > MAX_PATH * 3) return null;
  const raw = path.split('/').slice(1);
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const out: string[] = [];
  for (const s of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(s);
    } catch {
      return null;
    }
    if (decoded.length > MAX_PATH || !isStorableText(decoded)) return null;
    out.push(decoded);
  }
  return out;
}

const storableName = (s: string) => s !== '' && s.length <= MAX_SEGMENT && !/[\x00-\x1f/]/.test(s);

/**
 * Declares the areas' pages on `app`, a scope whose routes get their broadcast messages from
 * `broadcasts` (web/page-broadcasts.ts); the pages of unmatched paths get them from it too.
 */
export function installWebRoutes(app: FastifyInstance, areas: WebArea[], broadcasts: PageBroadcasts): void {
  const ctx = app.kiln;
  const projectPages = new Map<string, Partial<Record<Method, Handler<ProjectPageRequest>>>>();
  const namespacePages: { user?: Handler<UserPageRequest>; group?: Handler<GroupPageRequest> } = {};
  const groupPages = new Map<string, Partial<Record<Method, Handler<GroupSegmentRequest>>>>();
  const hasPage = (segment: string) => projectPages.get(segment)?.GET !== undefined;

  const { markdown } = broadcasts;
  const routes: WebRoutes = {
    markdown,
    page<U extends string>(method: Method, url: U, handler: Handler<PageRequest & { params: PathParams<U> }>) {
      app.route({
        method, url, config: { web: true }, schema: { hide: true },
        // Fastify matched `url` and decoded its parameters: they are exactly the names U declares.
        handler: async (request, reply) => {
          const p = await pageRequest(ctx, request, reply, hasPage);
          return run(method, { ...p, params: request.params as PathParams<U> }, handler);
        },
      });
    },
    project(method, segment, handler) {
      const entry = projectPages.get(segment) ?? {};
      if (entry[method]) throw new Error(`project page ${method} ${segment} declared twice`);
      entry[method] = handler;
      projectPages.set(segment, entry);
    },
    group(method, segment, handler) {
      const entry = groupPages.get(segment) ?? {};
      if (entry[method]) throw new Error(`group page ${method} ${segment} declared twice`);
      entry[method] = handler;
      groupPages.set(segment, entry);
    },
    namespace(kind: NamespaceKind, handler: Handler<never>) {
      (namespacePages as Record<NamespaceKind, Handler<never>>)[kind] = handler;
    },
  };
  for (const area of areas) area(routes);

  function projectRequest(p: PageRequest, found: ProjectContext, rest: string[]): ProjectPageRequest {
    // A message for some roles shows on a project's pages to its members of those roles.
    setBroadcastAccessLevel(found.actor);
    const project: WebProject = {
      ...found, fullPath: found.namespace.fullPath === '' ? found.project.path : `${found.namespace.fullPath}/${found.project.path}`,
      can: (action) => canOnProject(found.actor, action, found.project),
    };
    return {
      ...p, project, rest,
      render: (o) => frame({
        title: o.title, body: o.body, signedIn: p.signedIn, scripts: o.scripts, heading: o.heading,
        sidebar: projectSidebar(project, o.active, hasPage),
        breadcrumbs: o.breadcrumbs ?? [
          { text: found.namespace.fullName, href: `/${found.namespace.fullPath}` },
          { text: found.project.name, href: `/${project.fullPath}` },
        ],
      }),
    };
  }

  /** The page an unmatched path names, or false for a path that is no page (the API's 404 then). */
  async function answer(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const method = request.method === 'POST' ? 'POST' : 'GET';
    const segments = segmentsOf(request.url);
    if (segments === null || segments.length === 0) return false;
    if (NOT_PAGES.has(segments[0]!)) return false;
    // The cookie parser's hook runs for the web's own routes; an unmatched request reads them here.
    request.cookies ??= app.parseCookie(request.headers.cookie ?? '');
    return broadcasts.run(request, async () => {
      const p = await pageRequest(ctx, request, reply, hasPage);
      return answerPage(p, request, reply, method, segments);
    });
  }

  async function answerPage(
    p: PageRequest, request: FastifyRequest, reply: FastifyReply, method: Method, segments: string[],
  ): Promise<boolean> {
    if (segments[0] === 'groups' && segments.length >= 2) {
      await answerGroup(p, method, segments.slice(1));
      return true;
    }
    const dash = segments.indexOf('-');
    const owner = dash < 0 ? segments : segments.slice(0, dash);
    if (owner.length === 0 || !owner.every(storableName)) {
      sendError(p, 404);
      return true;
    }

    if (dash >= 0) {
      const segment = segments[dash + 1] ?? '';
      const handler = segment === '' ? undefined : projectPages.get(segment)?.[method];
      const found = owner.length >= 2 ? await findVisibleProject(ctx.db, p.session?.user ?? null, owner.join('/')) : null;
      if (!found || !handler) {
        if (!found && await answerGroupSegment(p, method, owner, segment, segments.slice(dash + 2))) return true;
        sendError(p, 404);
        return true;
      }
      const pr = projectRequest(p, found, segments.slice(dash + 2));
      if (method === 'GET' && canonicalRedirect(pr, owner, reply)) return true;
      await run(method, pr, handler);
      return true;
    }

    // `/<project>.git` in a browser: the project's page (the Service redirects there too).
    const last = owner[owner.length - 1]!;
    if (method === 'GET' && owner.length >= 2 && last.endsWith('.git') && last.length > 4) {
      const found = await findVisibleProject(ctx.db, p.session?.user ?? null, [...owner.slice(0, -1), last.slice(0, -4)].join('/'));
      if (found) {
        const pr = projectRequest(p, found, []);
        redirect(reply, 'GET', `/${pr.project.fullPath}`);
        return true;
      }
    }

    const overview = projectPages.get('')?.[method];
    if (owner.length >= 2 && overview) {
      const found = await findVisibleProject(ctx.db, p.session?.user ?? null, owner.join('/'));
      if (found) {
        const pr = projectRequest(p, found, []);
        if (method === 'GET' && canonicalRedirect(pr, owner, reply)) return true;
        await run(method, pr, overview);
        return true;
      }
    }
    // A project action the Service routes beside the project rather than under `/-/`
    // (`/<project>/download_export`, the export status's web_url), when no project has that path.
    const action = PROJECT_ROOT_ACTIONS.has(last) ? projectPages.get(last)?.[method] : undefined;
    if (owner.length >= 3 && action) {
      const found = await findVisibleProject(ctx.db, p.session?.user ?? null, owner.slice(0, -1).join('/'));
      if (found) {
        await run(method, projectRequest(p, found, []), action);
        return true;
      }
    }
    if (method === 'GET') {
      const group = namespacePages.group
        ? await findVisibleGroup(ctx.db, p.session?.user ?? null, owner.join('/'), 'path') : null;
      if (group && namespacePages.group) {
        setBroadcastAccessLevel(group.actor);
        await run(method, { ...p, group }, namespacePages.group);
        return true;
      }
      if (owner.length === 1 && namespacePages.user) {
        const user = await findUserByUsername(ctx.db, owner[0]!);
        const namespace = user ? await findUserNamespace(ctx.db, user.id) : undefined;
        if (user && namespace) {
          await run(method, { ...p, user, namespace }, namespacePages.user);
          return true;
        }
      }
    }
    sendError(p, 404);
    return true;
  }

  /** `/groups/<group…>` (the group's page) and `/groups/<group…>/-/<segment>/…` (its own pages). */
  async function answerGroup(p: PageRequest, method: Method, segments: string[]): Promise<void> {
    const dash = segments.indexOf('-');
    const owner = dash < 0 ? segments : segments.slice(0, dash);
    const handler = dash < 0
      ? (method === 'GET' ? namespacePages.group : undefined)
      : groupPages.get(segments[dash + 1] ?? '')?.[method];
    const group = owner.length > 0 && owner.every(storableName) && handler
      ? await findVisibleGroup(ctx.db, p.session?.user ?? null, owner.join('/'), 'path') : null;
    if (!group || !handler) {
      sendError(p, 404);
      return;
    }
    setBroadcastAccessLevel(group.actor);
    await run(method, { ...p, group, rest: dash < 0 ? [] : segments.slice(dash + 2) }, handler as Handler<GroupSegmentRequest>);
  }

  /**
   * A group's `/-/<segment>` page, when one is declared and the viewer may read the group (else
   * the caller's 404, the same as for a group that does not exist). `/groups/…` is answerGroup's.
   */
  async function answerGroupSegment(p: PageRequest, method: Method, owner: string[], segment: string, rest: string[]): Promise<boolean> {
    const handler = groupPages.get(segment)?.[method];
    if (!handler) return false;
    const viewer = p.session?.user ?? null;
    const group = await findVisibleGroup(ctx.db, viewer, owner.join('/'), 'path');
    if (!group) return false;
    await run(method, { ...p, group, rest }, handler);
    return true;
  }

  /**
   * A project reached by an old path (redirect_routes) or in other letter case: the browser is
   * sent to its path of now, as the Service's routable lookup does, with the rest of the address.
   */
  function canonicalRedirect(pr: ProjectPageRequest, owner: string[], reply: FastifyReply): boolean {
    const asked = owner.join('/');
    if (asked === pr.project.fullPath) return false;
    const url = pr.request.url;
    const path = url.split('?', 1)[0]!;
    const tail = path.slice(path.split('/').slice(0, owner.length + 1).join('/').length);
    const query = url.includes('?') ? url.slice(url.indexOf('?')) : '';
    redirect(reply, 'GET', `/${pr.project.fullPath.split('/').map(encodeURIComponent).join('/')}${tail}${query}`);
    return true;
  }

  app.unmatchedPages.answer = answer;
}
