export {
  createDatabase,
  createTemplate,
  databaseUrl,
  dropDatabase,
  type TestDatabase,
} from '../../src/testing/databases.js'
