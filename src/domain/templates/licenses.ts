/**
 * Licence templates (the Service's LicenseTemplateFinder over the licensee gem, which vendors
 * choosealicense.com's licence files). The Service offers the licences choosealicense does not
 * hide — these thirteen — and calls the three it features popular (`?popular=1`).
 *
 * What each licence is (title, nickname, description, permissions, conditions, limitations) is
 * choosealicense's metadata as licensee carries it; every one of the thirteen has all of it, so
 * no list is ever empty for want of data. `source_url` is null: choosealicense dropped its
 * `source` field before the Service's 15.x (spec/requests/api/templates_spec.rb expects null).
 * `html_url` is the licence's choosealicense page (Licensee::License#url).
 *
 * The texts come from the SPDX licence list (the spdx-license-list package), keyed by SPDX id.
 */
import fs from 'node:fs';
import path from 'node:path';
import spdx from 'spdx-license-list/full.js';

export interface LicenseTemplate {
  key: string;
  name: string;
  nickname: string | null;
  popular: boolean;
  html_url: string;
  source_url: string | null;
  description: string;
  conditions: string[];
  permissions: string[];
  limitations: string[];
  content: string;
}

interface LicenseMeta {
  key: string; spdx: string; name: string; nickname: string | null; featured: boolean; description: string;
  permissions: string[]; conditions: string[]; limitations: string[];
}

/**
 * choosealicense.com's metadata of the licences it shows (hidden: false), sorted by key as
 * Licensee::License.all sorts them, with the SPDX id of each text (builtin/licenses.json).
 */
const META_FILE = path.join(import.meta.dirname, 'builtin', 'licenses.json');

/**
 * The SPDX list prints the GNU v2 licences' "how to apply" notice without the angle brackets the
 * FSF's own text puts around its blanks; they are put back so that the placeholders below find
 * them as they find the v3 ones.
 */
const BRACKETS_RESTORED: Record<string, [RegExp, string][]> = {
  'gpl-2.0': [
    [/one line to give the program's name and an idea of what it does\./, "<one line to give the program's name and an idea of what it does.>"],
    [/Copyright \(C\) yyyy +name of author/, 'Copyright (C) <year>  <name of author>'],
  ],
  'lgpl-2.1': [
    [/one line to give the library's name and an idea of what it does\./, "<one line to give the library's name and an idea of what it does.>"],
    [/Copyright \(C\) year +name of author/, 'Copyright (C) <year>  <name of author>'],
  ],
};

// LicenseTemplate's placeholders (app/models/license_template.rb), the copyright holder also in
// the SPDX texts' spellings (`<owner>` of the BSD licences, `<copyright holders>` of MIT).
const PROJECT_PLACEHOLDER = /[<{[](project|description|one\sline\s.+\swhat\sit\sdoes\.)[>}\]]/gi;
const YEAR_PLACEHOLDER = /[<{[](year|yyyy)[>}\]]/gi;
const FULLNAME_PLACEHOLDER = /[<{[](fullname|name\sof\s(author|copyright\sowner)|owner|copyright\sholders?)[>}\]]/gi;

let all: Omit<LicenseTemplate, 'content'>[] | null = null;
const texts = new Map<string, string>();

function licenses(): Omit<LicenseTemplate, 'content'>[] {
  all ??= (JSON.parse(fs.readFileSync(META_FILE, 'utf8')) as LicenseMeta[]).map((m) => {
    let text = spdx[m.spdx].licenseText;
    for (const [from, to] of BRACKETS_RESTORED[m.key] ?? []) text = text.replace(from, to);
    texts.set(m.key, text);
    return {
      key: m.key, name: m.name, nickname: m.nickname, popular: m.featured,
      html_url: `http://choosealicense.com/licenses/${m.key}/`, source_url: null,
      description: m.description, conditions: m.conditions, permissions: m.permissions, limitations: m.limitations,
    };
  });
  return all;
}

/** Every licence, or only the popular ones (`popular` true; false or absent lists all, as `present?` of false does). */
export function listLicenseTemplates(o: { popular?: boolean } = {}): LicenseTemplate[] {
  return licenses().filter((l) => !o.popular || l.popular).map((l) => ({ ...l, content: texts.get(l.key)! }));
}

/**
 * One licence by key (exact, as LicenseTemplateFinder compares), its text with the year, the
 * project's name and the copyright holder filled in (LicenseTemplate#resolve!).
 */
export function findLicenseTemplate(
  key: string, fill: { project?: string | null; fullname?: string | null; year?: string } = {},
): LicenseTemplate | null {
  const found = licenses().find((l) => l.key === key);
  if (!found) return null;
  let content = texts.get(found.key)!;
  const year = fill.year ?? String(new Date().getUTCFullYear());
  content = content.replace(YEAR_PLACEHOLDER, year);
  // A function as replacement: `$` in a name is text, not a backreference.
  if (fill.project) content = content.replace(PROJECT_PLACEHOLDER, () => fill.project!);
  if (fill.fullname) content = content.replace(FULLNAME_PLACEHOLDER, () => fill.fullname!);
  return { ...found, content };
}
