/**
 * The baseline: a bare node:http server answering a JSON body shaped like a user entity, the
 * ceiling any framework-plus-database request is measured against.
 */
import http from 'node:http';

const body = JSON.stringify({
  id: 4242, username: 'bench4241', name: 'Bench User 4241', state: 'active', avatar_url: null,
  web_url: 'http://127.0.0.1/bench4241', created_at: '2026-01-01T01:10:41.000Z', bio: 'Seeded for benchmarks',
  location: '', public_email: null, skype: '', linkedin: '', twitter: '', discord: '', website_url: '',
  organization: 'kiln', job_title: 'Engineer', pronouns: null, bot: false, work_information: 'Engineer at kiln',
  followers: 0, following: 0, is_followed: false, local_time: null,
});

const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
