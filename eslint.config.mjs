// The linter keeps the code base's boundaries and its one formatting (dprint through
// @effect/eslint-plugin). `npm run lint` checks, `npm run format` rewrites the formatting.
// The boundaries are written by what each folder may import, so they hold wherever files move.
import js from "@eslint/js"
import * as effectEslint from "@effect/eslint-plugin"
import globals from "globals"
import tseslint from "typescript-eslint"

/** The core (src/) imports `effect` and its own files: nothing of Node, no other package. */
const coreImportsOnlyEffect = {
  regex: "^(?!effect(/|$)|\\.\\.?/)",
  message: "the core (src/) imports only `effect` and its own files; Node and other packages belong in adapters/"
}

/** A relative import that climbs `depth + 1` folders from a file `depth` folders below src/ leaves the core. */
const leavingTheCore = (depth) => ({
  regex: `^(\\.\\./){${depth + 1}}`,
  message: "the core (src/) imports nothing outside src/: adapters, tests and the widget depend on it, not it on them"
})

/** The domain (src/domain/, flat) imports only itself and `effect`: the other core folders build on it. */
const domainStaysBelow = {
  regex: "^\\.\\./(?!domain/)",
  message: "src/domain/ imports only src/domain/ and `effect`: move what it needs into src/domain/ instead"
}

/** Adapters use the names the core exports, never src/internal/. */
const adaptersSkipInternals = {
  regex: "^(\\.\\./)+src/internal/",
  message:
    "src/internal/ is the core's own: import the name from the module that exports it (a feature's index.ts, src/ports/, src/domain/, …)"
}

const importRules = (...patterns) => ({ "@typescript-eslint/no-restricted-imports": ["error", { patterns }] })

/** `pattern` but not `allowed` (import paths), for the imports listed below as still to move. */
const except = (pattern, allowed) => ({
  ...pattern,
  regex: `^(?!(${allowed.map((path) => path.replace(/[.]/g, "\\.")).join("|")})$)${pattern.regex.slice(1)}`
})

/**
 * Imports that cross a boundary today and are still to move (each file's others are checked):
 * the domain's, whose names belong in src/domain/.
 */
const DOMAIN_IMPORTS_TO_MOVE = {
  "src/domain/common.ts": ["../scheduling/zones.js"]
}

/** The widget's own files and the core modules it bundles: those must stay import-free. */
const WIDGET_BUNDLED_CORE = ["src/auth/allowOrigin.ts", "src/domain/holdLifetime.ts", "src/ports/trailingSlash.ts"]

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/",
      "**/dist/",
      "coverage/",
      "bench/results/",
      ".vitest-tmp/",
      ".scratch/"
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.node }
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 140,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          // The code base orders its imports by hand and puts braces where its authors did.
          "module.sortImportDeclarations": "maintain",
          "module.sortExportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain",
          useBraces: "maintain",
          bracePosition: "maintain"
        }
      }],
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_",
        ignoreRestSiblings: true
      }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-import-type-side-effects": "error",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-namespace": "off",
      // Effect.gen bodies without a yield are ordinary; `yield*` is not required.
      "require-yield": "off",
      "no-fallthrough": "off",
      // Input checks match control characters on purpose, to refuse them.
      "no-control-regex": "off",
      "object-shorthand": "error",
      // A variable that a callback defined before it reads is assigned once, later, on purpose.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }]
    }
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    rules: {
      // Plain JavaScript (bin/, widget/build.mjs) has no types to import.
      "@typescript-eslint/consistent-type-imports": "off"
    }
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" }
  },
  // The core's boundaries. Later blocks replace the rule's options, so each repeats the wider ones.
  { files: ["src/*.ts"], rules: importRules(coreImportsOnlyEffect, leavingTheCore(0)) },
  { files: ["src/*/*.ts"], rules: importRules(coreImportsOnlyEffect, leavingTheCore(1)) },
  { files: ["src/*/*/*.ts"], rules: importRules(coreImportsOnlyEffect, leavingTheCore(2)) },
  { files: ["src/*/*/*/**/*.ts"], rules: importRules(coreImportsOnlyEffect, leavingTheCore(3)) },
  { files: ["src/domain/*.ts"], rules: importRules(coreImportsOnlyEffect, leavingTheCore(1), domainStaysBelow) },
  {
    files: ["src/domain/*/**/*.ts"],
    rules: importRules(coreImportsOnlyEffect, {
      regex: "^\\.\\./\\.\\./",
      message: domainStaysBelow.message
    })
  },
  ...Object.entries(DOMAIN_IMPORTS_TO_MOVE).map(([file, allowed]) => ({
    files: [file],
    rules: importRules(coreImportsOnlyEffect, leavingTheCore(1), except(domainStaysBelow, allowed))
  })),
  // Adapters use the core's exported names, never its internals.
  { files: ["adapters/**/*.ts"], rules: importRules(adaptersSkipInternals) },
  {
    // The widget is a small browser bundle: from the core it takes types, and values only from
    // the import-free modules listed in WIDGET_BUNDLED_CORE.
    files: ["widget/*.ts"],
    rules: importRules(
      {
        regex: "^(?!\\.\\.?/)",
        message: "the widget bundles no package: it stays small and runs in any page"
      },
      {
        regex: `^\\.\\./(?!(${WIDGET_BUNDLED_CORE.map((file) => file.replace(/\.ts$/, "\\.js")).join("|")})$)`,
        allowTypeImports: true,
        message:
          "the widget takes only types from the core, or values from its import-free modules (eslint.config.mjs: WIDGET_BUNDLED_CORE)"
      }
    )
  },
  {
    files: WIDGET_BUNDLED_CORE,
    rules: {
      "no-restricted-syntax": ["error", {
        selector: "ImportDeclaration[importKind!='type'], ExportAllDeclaration, ExportNamedDeclaration[source]",
        message: "the widget bundles this module: it must stay import-free"
      }]
    }
  }
)
