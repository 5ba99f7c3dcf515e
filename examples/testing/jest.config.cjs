// Jest runs only the Jest example (plain CommonJS, so no transform); vitest has its own config.
module.exports = {
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.jest.test.cjs'],
  transform: {},
  testEnvironment: 'node',
};
