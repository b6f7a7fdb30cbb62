import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { seedDatabase } from './seed.ts';
import { inProcessKiln } from './in-process.ts';
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-ab-'));
const { ciProjectId } = await seedDatabase({ dataDir, databaseUrl: null, users: 100000, jobs: 1000, issues: 100000, mergeRequests: 10000, rootToken: 'bench-root-token-0000000001', userToken: 'bench-user-token-0000000001' });
const kiln = await inProcessKiln(dataDir);
const urls = { users: '/api/v4/users?per_page=20', issues: `/api/v4/projects/${ciProjectId}/issues?labels=bug`, mrs: `/api/v4/projects/${ciProjectId}/merge_requests` };
const headers = { 'private-token': 'bench-root-token-0000000001' };
let n = 0;
const cpu: Record<string, number[]> = { users: [], issues: [], mrs: [] };
for (let round = 0; round < 12; round++) {
  for (const [k, u] of Object.entries(urls)) {
    const N = 400;
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) await kiln.app.inject({ url: `${u}${u.includes('?') ? '&' : '?'}bench=${n++}`, headers });
    const c = process.cpuUsage(c0);
    if (round >= 2) cpu[k].push((c.user + c.system) / N);
  }
}
const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
const u = med(cpu.users), i = med(cpu.issues), m = med(cpu.mrs);
console.log(`users ${u.toFixed(0)} µs, issues ${i.toFixed(0)} µs (ratio ${(u / i).toFixed(3)}), mrs ${m.toFixed(0)} µs (ratio ${(u / m).toFixed(3)})`);
process.exit(0);
