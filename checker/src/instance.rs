//! A model's parameters and bug, resolved once into the one value that
//! the checker's entry points build a program from ([`Instance`]).

use crate::model::{Model, ParamError, Params};
use crate::replay::ReplayError;
use crate::schedule::Schedule;

/// A model's parameters and bug resolved once: the bug is one the model
/// seeds, every parameter is filled in (defaults for the rest) and in its
/// range, and the values are those the program runs with
/// ([`Model::effective_params`]). The CLI resolves a run's instance once,
/// prints it, checks with it and records it in the counterexample; the
/// library's `check_model` resolves one from its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    params: Params,
    bug: Option<u32>,
}

impl Instance {
    /// `overrides` (`name`, `value` as text, as `--set` gives them) and
    /// `bug` checked against `model` and resolved: the error names the bad
    /// value and the valid ones.
    pub fn from_overrides<M: Model>(
        model: &M,
        overrides: &[(String, String)],
        bug: Option<u32>,
    ) -> Result<Instance, ParamError> {
        let info = model.info();
        if let Some(b) = bug
            && !info.bugs.iter().any(|x| x.id == b)
        {
            return Err(ParamError::UnknownBug {
                model: info.name.to_string(),
                bug: b,
                valid: info.bugs.iter().map(|x| format!("{} ({})", x.id, x.name)).collect(),
            });
        }
        let params = Params::resolve(info.name, &info.params, overrides)?;
        Ok(Instance {
            params: model.effective_params(&params, bug),
            bug,
        })
    }

    /// The model's default parameters without a bug: the instance a run
    /// without `--set` and `--bug` checks.
    pub fn defaults<M: Model>(model: &M) -> Instance {
        let params = Params::defaults(&model.info().params);
        Instance {
            params: model.effective_params(&params, None),
            bug: None,
        }
    }

    /// [`Instance::from_overrides`] of `params`, possibly partial.
    pub fn resolve<M: Model>(model: &M, params: &Params, bug: Option<u32>) -> Result<Instance, ParamError> {
        Instance::from_overrides(model, &params.as_overrides(), bug)
    }

    /// The instance `schedule` was recorded on, checked against `model`.
    pub fn of_schedule<M: Model>(model: &M, schedule: &Schedule) -> Result<Instance, ReplayError> {
        let name = model.info().name;
        if schedule.model != name {
            return Err(ReplayError::WrongModel {
                schedule: schedule.model.clone(),
                model: name.to_string(),
            });
        }
        Instance::resolve(model, &Params(schedule.params.clone()), schedule.bug).map_err(ReplayError::NotForModel)
    }

    /// The parameters the program runs with.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The seeded bug switched on, if any.
    pub fn bug(&self) -> Option<u32> {
        self.bug
    }

    /// The program `model` builds for this instance.
    pub fn build<M: Model>(&self, model: &M) -> M::Program {
        model.build(&self.params, self.bug)
    }
}
