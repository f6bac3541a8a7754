import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'sdk/dist/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always'],
      'no-console': ['error', { allow: ['error', 'log'] }],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Layers (ARCHITECTURE.md): HTTP sits on top; use cases and everything under them never import it.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/app.ts'], // app.ts: the composition root builds the HTTP server too
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/http/*', '**/http/**'], message: 'Only src/http/ imports src/http/: throw a DomainError (src/errors.ts), return a result.' }] },
      ],
    },
  },
  // One way of knowing the engine: a db function finds it itself (dialectOf(db)); nothing above
  // src/db/ takes, reads or branches on a dialect.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/db/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "MemberExpression[property.name='dialect']",
          "ObjectPattern > Property[key.name='dialect']",
          "ImportSpecifier[imported.name='dialectOf']",
          "ImportSpecifier[imported.name='DialectName']",
        ].map((selector) => ({ selector, message: 'Only src/db/ knows there are two engines: a db function finds the dialect with dialectOf(db).' })),
      ],
    },
  },
  // Routes translate HTTP to a use-case call and back: no SQL and no repository call. Row types for
  // the views may be imported (type-only).
  {
    files: ['src/http/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'kysely', message: 'Routes hold no SQL: call a use case.', allowTypeImports: false }],
          patterns: [
            {
              group: ['**/db/*', '**/db/**'],
              message: 'Routes call use cases, not repositories; only row types may be imported (import type).',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
