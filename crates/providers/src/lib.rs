pub mod anilist;
mod json_text;
pub mod mal;
mod prepared_documents;
pub mod requests;
pub mod slot;
