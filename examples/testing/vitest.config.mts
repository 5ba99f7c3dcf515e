// Vitest runs only the vitest example; the Jest example has its own config.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['**/*.vitest.ts'],
  },
});
