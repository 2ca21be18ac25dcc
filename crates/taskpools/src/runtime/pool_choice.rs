//! [`Pool`]: the work-stealing deque each of a runtime's workers owns for fork-join jobs,
//! chosen when the runtime is built, with its names and aliases.

/// The work-stealing pool that a runtime's workers share for fork-join jobs: which deque each worker owns and
/// how thieves take from it. Chosen when the runtime is built, so that one fork-join program
/// can be compared across pools.
///
/// Names are unique across the crate: `private-public`/`dq8` is the task-pool family's
/// [`PoolKind::PrivatePublic`](crate::PoolKind::PrivatePublic), a different structure, and is
/// refused here with [`Error::RenamedPool`](crate::Error::RenamedPool) naming
/// `private-deque` (what this front end called `private-public` before).
///
/// ```
/// use taskpools::forkjoin::{Pool, Runtime};
///
/// for pool in Pool::ALL {
///     let rt = Runtime::builder().threads(2).pool(pool).build()?;
///     assert_eq!(rt.join(|| 20, || 22), (20, 22));
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pool {
    /// Private deques with steal requests (`private-deque`, alias `acr13`): each worker's
    /// frame stack is private, the owner pushes and pops without atomics or fences; a thief
    /// sends a steal request, which the owner answers with its oldest job at its next fork or
    /// wait (Acar, Charguéraud & Rainey, "Scheduling parallel programs by work stealing with
    /// private deques", PPoPP 2013). See [`crate::queue::private_deque`].
    PrivateDeque,
    /// One Chase–Lev deque per worker (`chase-lev`, alias `dcwq`): thieves take the oldest job
    /// directly; the owner's pop pays a store-load fence (Papakonstantinou, PARTEE (2015),
    /// §3.2). The same deque as [`PoolKind::ChaseLev`](crate::PoolKind::ChaseLev).
    ChaseLev,
}

impl Pool {
    /// The old name of [`Pool::PrivateDeque`]: `private-public` (`dq8`) names the pool
    /// family's private/public blocks ([`PoolKind::PrivatePublic`](crate::PoolKind)), a
    /// different structure.
    #[deprecated(note = "renamed to Pool::PrivateDeque (`private-deque`, alias `acr13`)")]
    #[allow(non_upper_case_globals)]
    pub const PrivatePublic: Pool = Pool::PrivateDeque;

    /// Every pool, the default first.
    pub const ALL: [Pool; 2] = [Pool::PrivateDeque, Pool::ChaseLev];

    /// Names this front end used before that now mean something else, with the pool they
    /// meant: refused by [`Pool::from_name`] with a message naming the new name.
    pub const RENAMED: [(&'static str, Pool); 2] = [
        ("private-public", Pool::PrivateDeque),
        ("dq8", Pool::PrivateDeque),
    ];

    /// The descriptive name.
    ///
    /// ```
    /// use taskpools::forkjoin::Pool;
    ///
    /// assert_eq!(Pool::PrivateDeque.name(), "private-deque");
    /// assert_eq!(Pool::ChaseLev.to_string(), "chase-lev");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "private-deque",
            Pool::ChaseLev => "chase-lev",
        }
    }

    /// The paper-style alias (`acr13`: Acar, Charguéraud & Rainey 2013; `dcwq`:
    /// Papakonstantinou, PARTEE (2015)).
    ///
    /// ```
    /// use taskpools::forkjoin::Pool;
    ///
    /// assert_eq!(Pool::PrivateDeque.alias(), "acr13");
    /// assert_eq!(Pool::from_name(Pool::ChaseLev.alias())?, Pool::ChaseLev);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn alias(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "acr13",
            Pool::ChaseLev => "dcwq",
        }
    }

    /// One line for `taskpools list`.
    ///
    /// ```
    /// for p in taskpools::forkjoin::Pool::ALL {
    ///     println!("{:14} {:6} {}", p.name(), p.alias(), p.description());
    /// }
    /// assert!(!taskpools::forkjoin::Pool::ChaseLev.description().is_empty());
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            Pool::PrivateDeque => {
                "private frame stack per worker; thieves send steal requests (default)"
            }
            Pool::ChaseLev => "lock-free Chase-Lev deque per worker; thieves take the oldest job",
        }
    }

    /// The pool with this name or alias. The other members of the task-pool family are not
    /// work-stealing deques and are refused with a list of the ones that are; the old names
    /// `private-public`/`dq8` are refused with [`Error::RenamedPool`](crate::Error::RenamedPool).
    ///
    /// ```
    /// use taskpools::forkjoin::Pool;
    ///
    /// assert_eq!(Pool::from_name("chase-lev")?, Pool::ChaseLev);
    /// assert_eq!("acr13".parse::<Pool>()?, Pool::PrivateDeque);
    /// assert!(Pool::from_name("dq8").is_err()); // a name of the task-pool family
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_name(name: &str) -> Result<Pool, crate::Error> {
        if let Some(&(old, pool)) = Pool::RENAMED.iter().find(|(old, _)| *old == name) {
            return Err(crate::Error::RenamedPool {
                old: old.to_string(),
                new: pool.name(),
                alias: pool.alias(),
            });
        }
        Pool::ALL
            .into_iter()
            .find(|p| p.name() == name || p.alias() == name)
            .ok_or_else(|| crate::Error::UnknownPool {
                name: name.to_string(),
                known: Pool::ALL
                    .iter()
                    .map(|p| format!("{} ({})", p.name(), p.alias()))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + " (fork-join runs on the work-stealing pools only)",
            })
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Pool {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pool::from_name(s)
    }
}
