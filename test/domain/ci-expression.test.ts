/**
 * The CI/CD variable expression language of rules:if (issue 14), against the Service's
 * documented behaviour (doc/ci/jobs/job_control.md, "CI/CD variable expressions").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateExpression, isValidExpression } from '../../src/domain/ci-config/expression.ts';

const vars = new Map([
  ['BRANCH', 'main'], ['EMPTY', ''], ['RELEASE', 'release/1.2'], ['PATTERN', '/^release\\//'], ['NAME', 'Kiln'],
]);
const holds = (e: string) => evaluateExpression(e, vars);

describe('CI variable expressions', () => {
  it('compares strings, variables and null', () => {
    assert.equal(holds('$BRANCH == "main"'), true);
    assert.equal(holds("$BRANCH == 'main'"), true);
    assert.equal(holds('$BRANCH != "main"'), false);
    assert.equal(holds('$UNDEFINED == null'), true);
    assert.equal(holds('$EMPTY == null'), false);
    assert.equal(holds('$EMPTY == ""'), true);
    assert.equal(holds('"main" == $BRANCH'), true);
    assert.equal(holds('${BRANCH} == "main"'), true);
  });

  it('treats a variable alone as present only when set and not empty', () => {
    assert.equal(holds('$BRANCH'), true);
    assert.equal(holds('$EMPTY'), false);
    assert.equal(holds('$UNDEFINED'), false);
  });

  it('matches regexes with flags, and patterns held in variables', () => {
    assert.equal(holds('$NAME =~ /^kiln$/'), false);
    assert.equal(holds('$NAME =~ /^kiln$/i'), true);
    assert.equal(holds('$RELEASE =~ /^release\\/\\d+\\.\\d+$/'), true);
    assert.equal(holds('$RELEASE =~ $PATTERN'), true);
    assert.equal(holds('$BRANCH !~ $PATTERN'), true);
    assert.equal(holds('$UNDEFINED =~ /x/'), false);
    assert.equal(holds('$UNDEFINED !~ /x/'), true);
  });

  it('gives && precedence over ||, with parentheses to group', () => {
    assert.equal(holds('$BRANCH == "x" && $NAME == "Kiln" || $EMPTY == ""'), true);
    assert.equal(holds('$BRANCH == "x" && ($NAME == "Kiln" || $EMPTY == "")'), false);
    assert.equal(holds('$UNDEFINED || $BRANCH == "main"'), true);
    // Ruby truthiness: an empty string is true while evaluating, false as the final value.
    assert.equal(holds('$EMPTY && $BRANCH'), true);
    assert.equal(holds('$BRANCH && $EMPTY'), false);
  });

  it('refuses invalid syntax, and runs hostile regexes in linear time', () => {
    for (const bad of ['$A = "b"', '$A ==', '($A == "b"', '"unterminated', '$A == /(/', 'foo']) assert.equal(isValidExpression(bad), false, bad);
    const long = new Map([['MSG', `${'a'.repeat(50_000)}!`]]);
    const started = Date.now();
    assert.equal(evaluateExpression('$MSG =~ /^(a+)+$/', long), false);
    assert.equal(evaluateExpression('$MSG =~ /(a|aa)+$/', long), false);
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
  });
});
