/**
 * The pipelines-email integration (issue 31, item 9): set up with a PUT (recipients required,
 * notify_only_broken_pipelines, branches_to_be_notified, the older notify_only_default_branch), it
 * mails a finished pipeline run by a real runner to each recipient through the SMTP server: a
 * failed one always, a passed one once notify_only_broken_pipelines is off, only for the branches
 * chosen, with the Service's subject, pipeline headers and text body.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import { createCiProject, createPipeline, type CiProject } from '../helpers/ci.ts';
import { pushClone, type PushClone } from '../helpers/ci-push.ts';
import { startListeningApp, freePort, type ListeningTestApp } from '../helpers/listen.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

interface Mail { to: string[]; data: string }

describe('pipelines-email integration', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;
  let smtp: SMTPServer;
  let runner: TestRunner;
  let owner: { name: string; username: string };
  let web: string;
  const mails: Mail[] = [];

  async function waitFor(pred: () => boolean, what: string, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const settle = () => new Promise((r) => setTimeout(r, 1000));
  const base = () => `/api/v4/projects/${p.project.id}`;
  const put = async (payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'PUT', url: `${base()}/integrations/pipelines-email`, token: p.ownerToken, payload });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  /** Runs the next job of a pipeline to the given end. */
  async function finish(status: 'success' | 'failed') {
    let job;
    for (let i = 0; i < 100 && !job; i++) {
      job = await runner.request();
      if (!job) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(job, 'a job for the runner');
    assert.equal((await runner.update(job, status, status === 'failed' ? 'script_failure' : undefined)).statusCode, 200);
    return job;
  }
  const header = (mail: Mail, name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(mail.data)?.[1]?.trim();

  before(async () => {
    const smtpPort = await freePort();
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            data: Buffer.concat(chunks).toString('utf8').replace(/=\r\n/g, '')
              .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\r\n/g, '\n'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve));
    t = await startListeningApp({
      KILN_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, KILN_SMTP_FROM: 'kiln@kiln.example',
      KILN_JOB_POLL_MS: '50', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN,
    });
    p = await createCiProject(t);
    web = `${t.url}/${p.fullPath}`;
    owner = (await t.request({ method: 'GET', url: '/api/v4/user', token: p.ownerToken })).json();
    clone = await pushClone(t.url, p);
    runner = await TestRunner.register(t, { tags: ['mail'], runUntagged: false });
  });

  after(async () => {
    await clone.remove();
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('takes its settings with a PUT: recipients required, a branch choice among the Service\'s', async () => {
    let res = await t.request({ method: 'PUT', url: `${base()}/integrations/pipelines-email`, token: p.ownerToken, payload: {} });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /recipients/);
    res = await t.request({
      method: 'PUT', url: `${base()}/integrations/pipelines-email`, token: p.ownerToken, payload: { recipients: 'a@x.example', branches_to_be_notified: 'some' },
    });
    assert.equal(res.statusCode, 400);
    const body = await put({ recipients: 'dev@x.example, ops@x.example\nqa@x.example', pipeline_events: true });
    assert.equal(body.title, 'Pipeline status emails');
    assert.equal(body.slug, 'pipelines-email');
    assert.equal(body.pipeline_events, true);
    assert.deepEqual(body.properties, { recipients: 'dev@x.example, ops@x.example\nqa@x.example' });
  });

  it('mails a failed pipeline to each recipient, and not a passed one while only broken ones are wanted', async () => {
    mails.length = 0;
    const sha = await clone.commitAndPush({ '.gitlab-ci.yml': 'unit:\n  tags: [mail]\n  script: echo hi\n' }, { message: 'Add CI' });
    await finish('success');
    await settle();
    assert.equal(mails.length, 0, 'a passed pipeline is not mailed by default');

    const failing = await createPipeline(t, p);
    const job = await finish('failed');
    await waitFor(() => mails.length >= 3, 'a mail to each recipient');
    await settle();
    assert.equal(mails.length, 3);
    assert.deepEqual(mails.map((m) => m.to).flat().sort(), ['dev@x.example', 'ops@x.example', 'qa@x.example']);
    const mail = mails[0];
    assert.equal(header(mail, 'Subject'), `${p.project.name} | Failed pipeline for main | ${sha.slice(0, 8)}`);
    assert.equal(header(mail, 'X-GitLab-Pipeline-Id'), String(failing.id));
    assert.equal(header(mail, 'X-GitLab-Pipeline-Ref'), 'main');
    assert.equal(header(mail, 'X-GitLab-Pipeline-Status'), 'failed');
    assert.equal(header(mail, 'X-GitLab-Project'), p.project.name);
    const text = mail.data.slice(mail.data.indexOf('\n\n') + 2);
    assert.ok(text.startsWith(`Pipeline #${failing.id} has failed!\n\nProject: ${p.project.name} ( ${web} )\nBranch: main ( ${web}/-/commits/main )\n\n`), text);
    assert.match(text, new RegExp(`Commit: ${sha.slice(0, 8)} \\( ${web}/-/commit/${sha} \\)\nCommit Message: Add CI\n`));
    assert.ok(text.includes(`Pipeline #${failing.id} ( ${web}/-/pipelines/${failing.id} ) triggered by ${owner.name} ( ${t.url}/${owner.username} )`), text);
    assert.ok(text.includes(`had 1 failed job.\n\nJob #${job.id} ( ${web}/-/jobs/${job.id} )\nStage: test\nName: unit\n`), text);
    assert.match(text, /\n-- \nYou're receiving this email because of your account on 127\.0\.0\.1\.\n$/);
  });

  it('mails a passed pipeline once notify_only_broken_pipelines is off', async () => {
    await put({ notify_only_broken_pipelines: false, recipients: 'dev@x.example' });
    mails.length = 0;
    const passing = await createPipeline(t, p);
    await finish('success');
    await waitFor(() => mails.length >= 1, 'the passed pipeline mail');
    await settle();
    assert.equal(mails.length, 1);
    assert.match(header(mails[0], 'Subject') ?? '', /\| Successful pipeline for main \| [0-9a-f]{8}$/);
    const text = mails[0].data;
    assert.ok(text.includes(`Pipeline #${passing.id} has passed!`), text);
    assert.ok(text.includes('successfully completed 1 job in 1 stage.'), text);
  });

  it('mails only the branches chosen: the default branch unless told, all of them when told', async () => {
    mails.length = 0;
    await clone.commitAndPush({ 'side.txt': 'side\n' }, { message: 'On the side', branch: 'side' });
    await finish('failed');
    await settle();
    assert.equal(mails.length, 0, 'a side branch is not mailed by default');

    await put({ recipients: 'dev@x.example', branches_to_be_notified: 'all' });
    await createPipeline(t, p, 'side');
    await finish('failed');
    await waitFor(() => mails.length >= 1, 'the side branch mail');
    assert.match(header(mails[0], 'Subject') ?? '', /\| Failed pipeline for side \|/);

    // Turned off, it mails nothing.
    mails.length = 0;
    const off = await t.request({ method: 'DELETE', url: `${base()}/integrations/pipelines-email`, token: p.ownerToken });
    assert.equal(off.statusCode, 204);
    await createPipeline(t, p);
    await finish('failed');
    await settle();
    assert.equal(mails.length, 0);
  });
});
