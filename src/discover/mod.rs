//! What exists here: the machine, its libraries and what they can do. Discovery
//! only looks; it never measures.

pub mod cpucaps;
pub mod host;
pub mod installed;
pub mod openssh;
pub mod openssl;
pub mod primitives;
pub mod ssh_list;
