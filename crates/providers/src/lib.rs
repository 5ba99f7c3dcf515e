pub mod anilist;
pub mod mal;
mod prepared_documents;
pub mod requests;
pub mod slot_schema;
