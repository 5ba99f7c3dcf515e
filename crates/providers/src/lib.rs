pub mod anilist;
pub mod mal;
pub mod requests;
