/**
 * The badge images people embed in READMEs (issue 33, item 5): a ref's pipeline status and its test
 * coverage as small SVGs, the Service's Projects::BadgesController#pipeline and #coverage with
 * lib/gitlab/ci/badge/{pipeline,coverage}/{status,report,template}.rb and the views
 * app/views/projects/badges/badge.svg.erb (style=flat, the default) and badge_flat-square.svg.erb.
 *
 * The widths are fixed, as the Service's are (it estimates no text width): 62 for the key unless
 * key_width says otherwise, 54 for the value (58 for coverage's "unknown").
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { isStorableText } from '../../db/constraints.ts';
import {
  newestPipelineIdInStatus, newestPipelineStatusForRef, newestSuccessfulJobCoverage, pipelineCoverageValues,
} from './badges.queries.ts';

/** Ci::Badge::Template: longer key texts fall back to the badge's own word; widths outside 1..512 to 62. */
const MAX_KEY_TEXT_SIZE = 64;
const MAX_KEY_WIDTH = 512;
const DEFAULT_KEY_WIDTH = 62;
/** Refs longer than git's own are never looked up (no pipeline can have one). */
const MAX_REF = 1024;
/** Job names are at most 255 characters (the CI config's bound); a longer one names no job. */
const MAX_JOB_NAME = 255;

export type BadgeStyle = 'flat' | 'flat-square';

/** One query value as the Service's params hold it: a string, or nothing (a repeated key is an array there too). */
type QueryValue = unknown;

export interface BadgeOptions {
  key_text?: QueryValue;
  key_width?: QueryValue;
  style?: QueryValue;
}

export interface PipelineBadgeOptions extends BadgeOptions { ignore_skipped?: QueryValue }
export interface CoverageBadgeOptions extends BadgeOptions {
  job?: QueryValue;
  min_good?: QueryValue;
  min_acceptable?: QueryValue;
  min_medium?: QueryValue;
}

export interface BadgeImage {
  keyText: string;
  keyWidth: number;
  valueText: string;
  valueWidth: number;
  valueColor: string;
}

/** Ruby's String#to_i: the leading integer after blanks, 0 without one (`"80px"` is 80). */
export function rubyToI(value: QueryValue): number {
  if (typeof value !== 'string') return 0;
  const m = /^[\s]*([+-]?\d+(?:_\d+)*)/.exec(value);
  if (!m) return 0;
  const n = Number(m[1].replace(/_/g, ''));
  return Number.isSafeInteger(n) ? n : (n > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER);
}

/** Gitlab::Utils.to_boolean with default false. */
function toBoolean(value: QueryValue): boolean {
  if (value === true) return true;
  return typeof value === 'string' && /^(true|t|yes|y|1|on)$/i.test(value);
}

function keyText(value: QueryValue, entity: string): string {
  if (typeof value === 'string' && [...value].length <= MAX_KEY_TEXT_SIZE) return value;
  return entity;
}

function keyWidth(value: QueryValue): number {
  const n = rubyToI(value);
  return n >= 1 && n <= MAX_KEY_WIDTH ? n : DEFAULT_KEY_WIDTH;
}

export function badgeStyle(value: QueryValue): BadgeStyle {
  return value === 'flat-square' ? 'flat-square' : 'flat';
}

function lookableRef(ref: string): boolean {
  return ref.length > 0 && ref.length <= MAX_REF && isStorableText(ref);
}

// ---------------------------------------------------------------------------------------------
// Pipeline status

/** Ci::Badge::Pipeline::Template: "success" reads "passed"; other statuses as they are. */
const PIPELINE_COLORS: Record<string, string> = {
  success: '#4c1',
  failed: '#e05d44',
  running: '#dfb317',
  pending: '#dfb317',
  preparing: '#a7a7a7',
  canceled: '#9f9f9f',
  skipped: '#9f9f9f',
  unknown: '#9f9f9f',
};

/** The ref's newest pipeline's status, or "unknown" (Ci::Badge::Pipeline::Status#status). */
export async function pipelineBadgeStatus(db: Kysely<DB>, projectId: number, ref: string, ignoreSkipped: boolean): Promise<string> {
  if (!lookableRef(ref)) return 'unknown';
  // Remembered until the next write (at most 2 s): a popular README asks for the same badge often.
  return cachedRead(db, `badge:pipeline:${projectId}:${ignoreSkipped ? 1 : 0}:${ref}`, async () =>
    (await newestPipelineStatusForRef(db, projectId, ref, ignoreSkipped)) ?? 'unknown');
}

export async function pipelineBadge(db: Kysely<DB>, projectId: number, ref: string, o: PipelineBadgeOptions): Promise<BadgeImage> {
  const status = await pipelineBadgeStatus(db, projectId, ref, toBoolean(o.ignore_skipped));
  return {
    keyText: keyText(o.key_text, 'pipeline'),
    keyWidth: keyWidth(o.key_width),
    valueText: status === 'success' ? 'passed' : status,
    valueWidth: 54,
    valueColor: PIPELINE_COLORS[status] ?? PIPELINE_COLORS.unknown,
  };
}

// ---------------------------------------------------------------------------------------------
// Coverage

const COVERAGE_COLORS = { good: '#4c1', acceptable: '#a3c51c', medium: '#dfb317', low: '#e05d44', unknown: '#9f9f9f' };

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * Ci::Badge::Coverage::Report#raw_coverage. Without a job: the coverage of the ref's newest
 * successful pipeline (the mean of its latest jobs' and statuses' coverage, Ci::Pipeline#coverage).
 * With one: the newest successful, not retried job of that name on the ref among the ref's newest
 * successful, running and failed pipelines, whatever its coverage (none is "unknown").
 */
export async function coverageBadgeValue(db: Kysely<DB>, projectId: number, ref: string, job: string | undefined): Promise<number | null> {
  if (!lookableRef(ref) || (job !== undefined && (job.length > MAX_JOB_NAME || !isStorableText(job)))) return null;
  return cachedRead(db, `badge:coverage:${projectId}:${job === undefined ? '' : `${job.length}:${job}`}:${ref}`, async () => {
    if (job === undefined) {
      const pipelineId = await newestPipelineIdInStatus(db, projectId, ref, 'success');
      if (pipelineId === undefined) return null;
      const values = await pipelineCoverageValues(db, pipelineId);
      if (values.length === 0) return null;
      return round2(values.reduce((a, b) => a + b, 0) / values.length);
    }
    const ids = await Promise.all(['success', 'running', 'failed'].map((s) => newestPipelineIdInStatus(db, projectId, ref, s)));
    if (ids.every((id) => id === undefined)) return null;
    const found = await newestSuccessfulJobCoverage(db, [ids[0] ?? 0, ids[1] ?? 0, ids[2] ?? 0], ref, job);
    return found?.coverage === null || found === undefined ? null : round2(found.coverage);
  });
}

/** Ci::Badge::Coverage::Template's thresholds: each bounded by the one above it, else its default. */
export function coverageThresholds(o: CoverageBadgeOptions): { good: number; acceptable: number; medium: number } {
  const g = rubyToI(o.min_good);
  const good = g >= 3 && g <= 100 ? g : 95;
  const a = rubyToI(o.min_acceptable);
  const acceptable = a >= 2 && a <= good - 1 ? a : Math.min(90, good - 1);
  const m = rubyToI(o.min_medium);
  const medium = m >= 1 && m <= acceptable - 1 ? m : Math.min(75, acceptable - 1);
  return { good, acceptable, medium };
}

/** The first band (inclusive at both ends, as Ruby ranges in a `case`) that holds the value. */
export function coverageColor(value: number | null, t: { good: number; acceptable: number; medium: number }): string {
  if (value === null) return COVERAGE_COLORS.unknown;
  if (value >= t.good && value <= 100) return COVERAGE_COLORS.good;
  if (value >= t.acceptable && value <= t.good) return COVERAGE_COLORS.acceptable;
  if (value >= t.medium && value <= t.acceptable) return COVERAGE_COLORS.medium;
  if (value >= 0 && value <= t.medium) return COVERAGE_COLORS.low;
  return COVERAGE_COLORS.unknown;
}

export async function coverageBadge(db: Kysely<DB>, projectId: number, ref: string, o: CoverageBadgeOptions): Promise<BadgeImage> {
  // `job=` (present but blank) is no job, as `@job.present?` says.
  const job = typeof o.job === 'string' && o.job.trim() !== '' ? o.job : undefined;
  const value = await coverageBadgeValue(db, projectId, ref, job);
  return {
    keyText: keyText(o.key_text, 'coverage'),
    keyWidth: keyWidth(o.key_width),
    valueText: value === null ? 'unknown' : `${value.toFixed(2)}%`,
    valueWidth: value === null ? 58 : 54,
    valueColor: coverageColor(value, coverageThresholds(o)),
  };
}

// ---------------------------------------------------------------------------------------------
// SVG

/**
 * Text as XML character data. Beyond the five markup characters, characters XML 1.0 does not
 * allow at all (C0 controls but tab and newlines, U+FFFE/U+FFFF) become U+FFFD so the image always
 * parses; the Service's view would write them out and leave an image no viewer draws.
 */
export function xmlText(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const FONT = 'font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11"';

export function renderBadgeSvg(b: BadgeImage, style: BadgeStyle): string {
  const width = b.keyWidth + b.valueWidth;
  // Integer division, as the Service's templates compute the anchors.
  const keyX = Math.floor(b.keyWidth / 2);
  const valueX = b.keyWidth + Math.floor(b.valueWidth / 2);
  const key = xmlText(b.keyText);
  const value = xmlText(b.valueText);
  if (style === 'flat-square') {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20">
  <g shape-rendering="crispEdges">
    <path fill="#555" d="M0 0 h${b.keyWidth} v20 H0 z"/>
    <path fill="${b.valueColor}" d="M${b.keyWidth} 0 h${b.valueWidth} v20 H${b.keyWidth} z"/>
  </g>
  <g fill="#fff" text-anchor="middle">
    <g ${FONT}>
      <text x="${keyX}" y="14">${key}</text>
      <text x="${valueX}" y="14">${value}</text>
    </g>
  </g>
</svg>
`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20">
  <linearGradient id="b" x2="0" y2="100%">
    <stop offset="0" stop-color="#bbb" stop-opacity=".1"/>
    <stop offset="1" stop-opacity=".1"/>
  </linearGradient>
  <mask id="a">
    <rect width="${width}" height="20" rx="3" fill="#fff"/>
  </mask>
  <g mask="url(#a)">
    <path fill="#555" d="M0 0h ${b.keyWidth}v 20H 0z"/>
    <path fill="${b.valueColor}" d="M${b.keyWidth} 0h ${b.valueWidth}v 20H ${b.keyWidth}z"/>
    <path fill="url(#b)" d="M0 0h ${width}v 20H 0z"/>
  </g>
  <g fill="#fff" text-anchor="middle">
    <g ${FONT}>
      <text x="${keyX}" y="15" fill="#010101" fill-opacity=".3">${key}</text>
      <text x="${keyX}" y="14">${key}</text>
      <text x="${valueX}" y="15" fill="#010101" fill-opacity=".3">${value}</text>
      <text x="${valueX}" y="14">${value}</text>
    </g>
  </g>
</svg>
`;
}
