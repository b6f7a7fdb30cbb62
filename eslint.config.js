// Lint rules kept small on purpose: the type checker does the heavy lifting.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-console': 'off',
    },
  },
  // Lines stay within 140 columns so diffs and side-by-side review stay readable (issue 27 item 6).
  // URLs and regular expressions are exempt because breaking them would hurt more than a long line.
  // Committed migrations are exempt: a committed migration is never edited, so it cannot be reflowed.
  // Tests are exempt for now: they are not yet reflowed.
  {
    files: ['src/**', 'bench/**', 'scripts/**'],
    ignores: ['src/db/migrations/**'],
    rules: {
      // Template literals are exempt: an html`…` page or a sql`…` statement split across lines
      // would change the text it makes.
      'max-len': ['error', { code: 140, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreTemplateLiterals: true }],
    },
  },
);
